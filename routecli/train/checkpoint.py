"""One checkpoint format for every model, loadable with ``torch.load(..., weights_only=True)``.

A checkpoint is a plain dict::

    {"format": 1, "kind": "miloop" | "nds" | ..., "config": {...architecture...},
     "model": {name: tensor}, "meta": {...how it was trained...}, "sha256": "<hex>",
     # training checkpoints (last.pt) add: "optimizer", "train", counters}

``sha256`` is the digest of the model tensors (names, dtypes, shapes and bytes in name order):
:func:`load` recomputes it, so a damaged or edited file is refused instead of solving worse
in silence. Every file is written through :func:`routecli.atomic.atomic_write`.

Shipped weights are package data (``routecli/checkpoints``) found through
``importlib.resources``; ``$ROUTECLI_CHECKPOINTS`` names another folder to look in first.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import zipfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import torch

from routecli.atomic import atomic_write
from routecli.errors import RoutecliError

FORMAT = 1
CHECKPOINTS_ENV = "ROUTECLI_CHECKPOINTS"


class CheckpointError(RoutecliError):
    """A checkpoint file is missing, unreadable, damaged or of the wrong kind."""


def tensor_digest(state: dict[str, torch.Tensor]) -> str:
    """SHA-256 over the tensors of a state dict (name, dtype, shape, bytes; sorted by name)."""
    digest = hashlib.sha256()
    for name in sorted(state):
        tensor = state[name].detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}|{state[name].dtype}|{tuple(state[name].shape)}|".encode())
        digest.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()


def policy_checkpoint(kind: str, config: dict[str, Any], state: dict[str, torch.Tensor],
                      meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shippable form: float32 CPU weights, the architecture, how it was trained."""
    weights = {k: v.detach().float().cpu().clone() for k, v in state.items()}
    return {"format": FORMAT, "kind": kind, "config": dict(config), "model": weights,
            "meta": dict(meta or {}), "sha256": tensor_digest(weights)}


def save(checkpoint: dict[str, Any], path: str | Path) -> Path:
    """Write a checkpoint atomically (its ``sha256`` is (re)computed from ``model``)."""
    data = {**checkpoint, "format": FORMAT, "sha256": tensor_digest(checkpoint["model"])}
    return atomic_write(path, lambda handle: torch.save(data, handle))


def load(path: str | Path, kind: str | None = None,
         device: str | torch.device = "cpu") -> dict[str, Any]:
    """Read and check a checkpoint: the format, the ``kind`` when given, the tensor digest.

    Every failure (missing, empty, truncated, not a checkpoint, unsafe pickle, damaged
    weights, another model's file) is one :class:`CheckpointError` line.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        data = torch.load(path, map_location=device, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, zipfile.BadZipFile, ValueError,
            AttributeError, TypeError, OSError) as err:
        reason = " ".join(str(err).split())[:160] or type(err).__name__
        raise CheckpointError(f"{path}: not a readable routecli checkpoint ({reason})") from None
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict) \
            or not isinstance(data.get("config"), dict):
        raise CheckpointError(f"{path}: not a routecli checkpoint (needs config and model)")
    if data.get("format") != FORMAT or "kind" not in data:
        raise CheckpointError(f"{path}: checkpoint format {data.get('format')!r} is not "
                              f"routecli's format {FORMAT}")
    if kind is not None and data["kind"] != kind:
        raise CheckpointError(f"{path}: a {data['kind']} checkpoint, not a {kind} one")
    if tensor_digest(data["model"]) != data.get("sha256"):
        raise CheckpointError(f"{path}: the weights do not match their SHA-256 "
                              "(damaged or edited file)")
    return data


Model = TypeVar("Model", bound=torch.nn.Module)


def load_model(path: str | Path, kind: str, build: Callable[[dict[str, Any]], Model],
               architecture: str, device: str | torch.device = "cpu") -> Model:
    """The model of a ``kind`` checkpoint, rebuilt by ``build(config)``, in eval mode on
    ``device``; weights that do not fit ``architecture`` are one :class:`CheckpointError`."""
    data = load(path, kind, device)
    try:
        model = build(data["config"])
        model.load_state_dict(data["model"])
    except (TypeError, ValueError, RuntimeError) as err:
        raise CheckpointError(f"{path}: weights do not fit the {architecture} architecture "
                              f"({' '.join(str(err).split())[:160]})") from None
    return model.to(device).eval()


def shipped(name: str) -> Path:
    """Path of the shipped checkpoint ``name`` (e.g. ``miloop-cvrp.pt``):
    ``$ROUTECLI_CHECKPOINTS/name`` when that exists, else the package's own copy."""
    folder = os.environ.get(CHECKPOINTS_ENV)
    if folder and (Path(folder) / name).is_file():
        return Path(folder) / name
    return Path(str(resources.files("routecli.checkpoints") / name))

