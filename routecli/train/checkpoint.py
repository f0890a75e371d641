"""Checkpoints as plain dicts of tensors and primitives (loadable with ``weights_only=True``).

A training checkpoint holds the model, optimizer, step counters and both configs, written
atomically (temporary file + rename) so an interrupted write never corrupts ``last.pt``. A
shipped policy checkpoint holds only ``config``, ``model`` and a ``meta`` dict.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from routecli.models.miloop import MiLoop, MiLoopConfig


def atomic_save(obj: dict[str, Any], path: str | Path) -> None:
    """``torch.save`` to ``path`` through a temporary file in the same folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def load(path: str | Path, device: str | torch.device = "cpu") -> dict[str, Any]:
    """Load a checkpoint dict without unpickling arbitrary objects."""
    return torch.load(path, map_location=device, weights_only=True)


def policy_checkpoint(model: MiLoop, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The small shippable form: config + float32 state dict + metadata."""
    state = {k: v.detach().float().cpu().clone() for k, v in model.state_dict().items()}
    return {"config": model.config.to_dict(), "model": state, "meta": dict(meta or {})}


def load_policy(path: str | Path, device: str | torch.device = "cpu") -> MiLoop:
    """Rebuild a :class:`MiLoop` from a policy or training checkpoint, in eval mode."""
    data = load(path, device)
    if "config" not in data or "model" not in data:
        raise ValueError(f"{path}: not a MiLoop checkpoint (needs 'config' and 'model')")
    model = MiLoop(MiLoopConfig(**data["config"]))
    model.load_state_dict(data["model"])
    return model.to(device).eval()
