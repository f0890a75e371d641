"""Where torch code meets the CPU-only parts of a run, and the arithmetic it runs in.

Library entry points take ``device: str | torch.device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``;
the CLI resolves ``auto`` before). Inside a step every tensor is made on the device of the
data it belongs to; the one sanctioned way back to the host is :func:`to_host`, used where a
step hands its tensors to NumPy / numba code (the search engine, label solvers, writers).
"""

from __future__ import annotations

import numpy as np
import torch

from routecli.resources import PRECISIONS, Precision


def to_host(tensor: torch.Tensor) -> np.ndarray:
    """``tensor`` as a NumPy array: the CPU boundary of a step (a device-to-host copy and a
    synchronisation on a GPU, a view on the CPU)."""
    return tensor.detach().cpu().numpy()


def native_bf16(device: torch.device | str = "cpu") -> bool:
    """Whether ``device`` multiplies bfloat16 matrices natively. A CPU without AVX-512 BF16 or
    AMX emulates them: a bfloat16 training step measured 6.4x slower than float32 on an AVX2
    EPYC (``benchmarks/results/miloop_throughput_avx2{,_bf16}.md``), where one with AVX-512
    BF16 ran it ~4x faster than the old float32 path."""
    if torch.device(device).type == "cuda":
        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def resolve_precision(precision: str, device: torch.device | str = "cpu",
                      bf16_on_cpu: bool = True) -> Precision:
    """``auto`` -> ``bf16`` where :func:`native_bf16` (on a CPU only when ``bf16_on_cpu``, the
    model's policy), else ``fp32``; an explicit choice is kept."""
    if precision == "auto":
        cpu = torch.device(device).type == "cpu"
        return "bf16" if native_bf16(device) and (bf16_on_cpu or not cpu) else "fp32"
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be auto or one of {', '.join(PRECISIONS)}, "
                         f"not {precision!r}")
    return precision


def autocast(precision: str, device: torch.device | str) -> torch.autocast:
    """Mixed precision for ``bf16``: matrix products in bfloat16, float32 master weights.
    The weight casts are not cached: a rollout uses every weight once per step, and a cached
    cast would sum the gradients of all steps in bfloat16."""
    device_type = torch.device(device).type
    return torch.autocast(device_type, dtype=torch.bfloat16, enabled=precision == "bf16",
                          cache_enabled=False)


def mixed_precision(device: torch.device | str, precision: str = "auto",
                    bf16_on_cpu: bool = False) -> torch.autocast:
    """:func:`autocast` for ``precision`` resolved on ``device`` under a model's policy
    (``bf16_on_cpu``, :func:`resolve_precision`)."""
    return autocast(resolve_precision(precision, device, bf16_on_cpu), device)


def generator(device: str | torch.device, seed: int) -> torch.Generator:
    """A seeded random generator on ``device`` (sampling ops need one on the data's device)."""
    return torch.Generator(device=torch.device(device)).manual_seed(seed)
