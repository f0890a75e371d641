"""Where torch code meets the CPU-only parts of a run, and mixed precision on a GPU.

Library entry points take ``device: str | torch.device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``;
the CLI resolves ``auto`` before). Inside a step every tensor is made on the device of the
data it belongs to; the one sanctioned way back to the host is :func:`to_host`, used where a
step hands its tensors to NumPy / numba code (the search engine, label solvers, writers).
"""

from __future__ import annotations

import numpy as np
import torch


def to_host(tensor: torch.Tensor) -> np.ndarray:
    """``tensor`` as a NumPy array: the CPU boundary of a step (a device-to-host copy and a
    synchronisation on a GPU, a view on the CPU)."""
    return tensor.detach().cpu().numpy()


def gpu_autocast(device: str | torch.device) -> torch.autocast:
    """bfloat16 autocast on a CUDA device that computes in bfloat16 (float32 master weights),
    disabled elsewhere: a CPU keeps each model's own precision setting."""
    device = torch.device(device)
    enabled = (device.type == "cuda" and torch.cuda.is_available()
               and torch.cuda.is_bf16_supported())
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)


def generator(device: str | torch.device, seed: int) -> torch.Generator:
    """A seeded random generator on ``device`` (sampling ops need one on the data's device)."""
    return torch.Generator(device=torch.device(device)).manual_seed(seed)
