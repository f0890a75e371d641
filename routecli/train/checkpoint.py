"""One checkpoint format for every model, loadable with ``torch.load(..., weights_only=True)``.

A checkpoint is a plain dict::

    {"format": 2, "kind": "miloop" | "nds" | ..., "config": {...architecture...},
     "model": {name: tensor}, "meta": {...how it was trained...}, "sha256": "<hex>",
     "config_sha256": "<hex>",
     # training checkpoints (last.pt) add: "optimizer", "train", counters}

``sha256`` is the digest of the model tensors (names, dtypes, shapes and bytes in name order;
the cards name weights by it) and ``config_sha256`` the digest of the configuration (its JSON
with sorted keys): :func:`load` recomputes both, so a damaged or edited file is refused
instead of solving worse in silence; an edit that keeps every weight's shape (``num_heads`` 8
to 16) changes what the model computes, which only the configuration's digest catches. Files
of format 1 (written before the configuration had a digest) still load, with only the tensor
digest checked. :func:`load_model` also holds the configuration to the weights: every integer
in it is bounded by the weights' sizes, and the model it describes is laid out without memory
(on the ``meta`` device) and must have exactly the weights' names and shapes before the real
one is built, so a ``layers: 1000000`` is one error line, not a 5 GB allocation. Every file is
written through :func:`routecli.atomic.atomic_write`.

Shipped weights are package data (``routecli/checkpoints``) found through
``importlib.resources``; ``$ROUTECLI_CHECKPOINTS`` names another folder to look in first.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import warnings
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import torch
from torch import nn

from routecli.atomic import atomic_write
from routecli.errors import RoutecliError, display_path, excerpt

FORMAT = 2
READABLE_FORMATS = (1, 2)  # 1: no configuration digest
CHECKPOINTS_ENV = "ROUTECLI_CHECKPOINTS"


M = TypeVar("M", bound=nn.Module)


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


def config_digest(config: dict[str, Any]) -> str:
    """SHA-256 of a configuration's JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def policy_checkpoint(kind: str, config: dict[str, Any], state: dict[str, torch.Tensor],
                      meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shippable form: float32 CPU weights, the architecture, how it was trained."""
    weights = {k: v.detach().float().cpu().clone() for k, v in state.items()}
    return {"format": FORMAT, "kind": kind, "config": dict(config), "model": weights,
            "meta": dict(meta or {}), "sha256": tensor_digest(weights),
            "config_sha256": config_digest(config)}


def save(checkpoint: dict[str, Any], path: str | Path) -> Path:
    """Write a checkpoint atomically (its digests are (re)computed from ``model`` and
    ``config``)."""
    data = {**checkpoint, "format": FORMAT, "sha256": tensor_digest(checkpoint["model"]),
            "config_sha256": config_digest(checkpoint["config"])}
    return atomic_write(path, lambda handle: torch.save(data, handle))


COMPACT = "state-bf16.pt"  # the run state a run folder commits (data/runs/**/state-bf16.pt)


def compact(state: dict[str, Any]) -> dict[str, Any]:
    """A training state small enough to commit: the weights in bfloat16 and no optimizer
    moments (a run resumed from it starts a fresh optimizer and re-warms it); counters and
    configuration as they are. About a third of the full state."""
    model = {k: v.detach().to(torch.bfloat16) if v.is_floating_point() else v
             for k, v in state["model"].items()}
    return {k: v for k, v in state.items() if k != "optimizer"} | {"model": model}


# What torch's weights-only unpickler found, inside its several-paragraph message.
_REFUSED = re.compile(r"WeightsUnpickler error:\s*(.+?)\s*(?:\n\s*\n|$)", re.DOTALL)


def load(path: str | Path, kind: str | None = None, device: str | torch.device = "cpu", *,
         expect: dict[str, Any] | None = None, needs: dict[str, type] | None = None
         ) -> dict[str, Any]:
    """Read and check a checkpoint: the one gate every file of weights goes through.

    Checked: the format, the ``kind`` when given, the digests, weights that can be a trained
    model (dense tensors with real storage, finite, not all zero), a configuration of plain
    finite values, the configuration entries of ``expect`` (the run's problem, or the whole
    architecture of a run being resumed), and the entries ``needs`` names with their types
    (the optimizer state and counters a training run's ``last.pt`` holds). Every failure
    (missing, a folder, empty, truncated, not a checkpoint, unsafe pickle, damaged or edited
    weights, another model's or problem's file, a policy where a run's state is needed) is one
    :class:`CheckpointError` line.
    """
    path = Path(path)
    shown = display_path(path)
    if path.is_dir():
        raise CheckpointError(f"{shown} is a folder, not a checkpoint file")
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {shown}")
    try:
        with warnings.catch_warnings():  # torch warns about a foreign pickle before it refuses it
            warnings.simplefilter("ignore")
            data = torch.load(path, map_location=device, weights_only=True)
    except Exception as err:  # noqa: BLE001 - the unpickler meets junk with any exception
        refused = _REFUSED.search(str(err))
        reason = (f"a weights-only load refuses it: {excerpt(refused.group(1))}" if refused
                  else excerpt(str(err).split(". ")[0]) if str(err) else type(err).__name__)
        raise CheckpointError(f"{shown}: not a readable routecli checkpoint "
                              f"({reason})") from None
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict) \
            or not isinstance(data.get("config"), dict):
        raise CheckpointError(f"{shown}: not a routecli checkpoint (needs config and model)")
    if data.get("format") not in READABLE_FORMATS or "kind" not in data:
        raise CheckpointError(f"{shown}: checkpoint format {excerpt(data.get('format'))} is not "
                              f"one of routecli's formats "
                              f"({', '.join(map(str, READABLE_FORMATS))})")
    if kind is not None and data["kind"] != kind:
        raise CheckpointError(f"{shown}: a {str(data['kind'])[:40]} checkpoint, not a {kind} one")
    _check_weights(data["model"], shown)
    if tensor_digest(data["model"]) != data.get("sha256"):
        raise CheckpointError(f"{shown}: the weights do not match their SHA-256 "
                              "(damaged or edited file)")
    if data["format"] >= 2 and config_digest(data["config"]) != data.get("config_sha256"):
        raise CheckpointError(f"{shown}: the configuration does not match its SHA-256 "
                              "(damaged or edited file)")
    _check_config(data["config"], shown)
    for key, wanted in (expect or {}).items():
        if data["config"].get(key) != wanted:
            raise CheckpointError(f"{shown}: a checkpoint of {key} "
                                  f"{_value(data['config'].get(key))}, not {_value(wanted)}")
    for key, wanted_type in (needs or {}).items():
        if not isinstance(data.get(key), wanted_type) or isinstance(data.get(key), bool):
            raise CheckpointError(f"{shown}: not a training run's state (no {key}): a policy "
                                  "checkpoint starts a new run with --init; --resume needs the "
                                  "last.pt a run wrote")
    return data


def check_resume(stored: dict[str, Any], given: dict[str, Any], free: tuple[str, ...],
                 path: Path, shape: dict[str, Callable[[Any], Any]] | None = None) -> None:
    """A resumed run trains on as it started: every setting outside ``free`` (resources) must be
    the one stored in its ``last.pt`` (for a key of ``shape``, ``shape[key](value)`` must be:
    the stages of a curriculum, whose steps may grow); one :class:`CheckpointError` names the
    first that is not."""
    for key, value in given.items():
        same = (shape or {}).get(key, lambda v: v)
        if key not in free and key in stored and same(stored[key]) != same(value):
            option = "--" + key.replace("_", "-")
            raise CheckpointError(f"--resume: {display_path(path)} was trained with {option} "
                                  f"{_value(stored[key])}, not {_value(value)}; rerun its "
                                  "command with --resume, or start a new run with --out")


def _value(value: Any) -> str:
    """A setting in a message: a string quoted and shortened, anything else as printed."""
    return excerpt(value) if isinstance(value, str) else excerpt(value)[1:-1]


def _check_weights(state: dict[Any, Any], shown: str) -> None:
    """Weights that can be a trained model: named dense tensors with storage (no sparse or
    ``meta`` tensor), every float finite, not every float zero."""
    floats = []
    for name, tensor in state.items():
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            raise CheckpointError(f"{shown}: the model weights hold a value that is not a tensor")
        if tensor.layout != torch.strided or tensor.is_meta or tensor.is_quantized:
            where = "no data (meta)" if tensor.is_meta else f"layout {tensor.layout}"
            raise CheckpointError(f"{shown}: weight {excerpt(name)} is not a dense tensor "
                                  f"({where})")
        if tensor.is_floating_point() or tensor.is_complex():
            if not bool(torch.isfinite(tensor).all()):
                raise CheckpointError(f"{shown}: weight {excerpt(name)} holds NaN or infinite "
                                      "values; no trained model does")
            floats.append(tensor)
    if floats and not any(bool(t.any()) for t in floats):
        raise CheckpointError(f"{shown}: every weight is zero; no trained model is")


def _check_config(config: dict[str, Any], shown: str) -> None:
    """A configuration of plain values: str keys; bools, ints, finite floats, strings, None,
    and lists or dicts of them."""

    def plain(value: Any) -> bool:
        if isinstance(value, list | tuple):
            return all(plain(v) for v in value)
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        return value is None or isinstance(value, bool | int | str) or (
            isinstance(value, float) and math.isfinite(value))

    for key, value in config.items():
        if not isinstance(key, str) or not plain(value):
            raise CheckpointError(f"{shown}: configuration {excerpt(key)}={excerpt(value)} is "
                                  "not a plain finite value")


def load_model(path: str | Path, kind: str, make: Callable[[dict[str, Any]], M], name: str,
               device: str | torch.device = "cpu", expect: dict[str, Any] | None = None) -> M:
    """The model of a ``kind`` checkpoint (:func:`load`, with its ``expect``), rebuilt by
    ``make(config)`` in eval mode on ``device``, after checking that the configuration
    describes exactly the weights (see the module docstring); every mismatch is one
    :class:`CheckpointError` naming the ``name`` architecture."""
    data = load(path, kind, device, expect=expect)
    config, state = data["config"], data["model"]
    bound = max([len(state), *(max(t.shape, default=1) for t in state.values())])
    for key, value in config.items():
        if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= bound:
            raise CheckpointError(f"{path}: configuration {key}={value} does not fit the weights "
                                  f"of the {name} architecture")
    try:
        _check_layout(make, config, state)
        model = make(config)
        model.load_state_dict(state)
    except (TypeError, ValueError, RuntimeError, ArithmeticError) as err:  # a zero head count
        raise CheckpointError(f"{path}: weights do not fit the {name} architecture "
                              f"({' '.join(str(err).split())[:160]})") from None
    return model.to(device).eval()


def _check_layout(make: Callable[[dict[str, Any]], nn.Module], config: dict[str, Any],
                  state: dict[str, torch.Tensor]) -> None:
    """Raise ``ValueError`` unless the model of ``config``, laid out on the ``meta`` device (no
    memory), has the names and shapes of ``state``. A model that computes values while it is
    built (NDS's encoding amplitudes) cannot be laid out there and keeps the bound alone."""
    try:
        with torch.device("meta"):
            layout = {k: tuple(v.shape) for k, v in make(config).state_dict().items()}
    except (RuntimeError, NotImplementedError) as err:
        if "meta" in str(err):
            return
        raise
    if layout != {k: tuple(v.shape) for k, v in state.items()}:
        differ = sorted(set(layout) ^ set(state)) or sorted(
            k for k in layout if layout[k] != tuple(state[k].shape))
        raise ValueError(f"configuration and weights differ at {differ[0]}")


def shipped(name: str) -> Path:
    """Path of the shipped checkpoint ``name`` (e.g. ``miloop-cvrp.pt``):
    ``$ROUTECLI_CHECKPOINTS/name`` when that exists, else the package's own copy."""
    folder = os.environ.get(CHECKPOINTS_ENV)
    if folder and (Path(folder) / name).is_file():
        return Path(folder) / name
    return Path(str(resources.files("routecli.checkpoints") / name))

