"""The one calling convention every positional encoding follows, and shared maths.

Every encoding is an ``nn.Module`` subclass of :class:`PositionalEncoding` called as
``pe(batch: RouteBatch) -> Tensor``. What the tensor means is given by ``pe.kind``:

- ``"node"``:   per-slot vectors ``[B, S, pe.out_dim]``, concatenated with the node features
  before the first feed-forward projection (``FF([x || PE])``, PE paper Section 4.3);
  zero on padding slots.
- ``"bias"``:   attention-logit biases ``[B, H, S, S]`` or ``[B, 1, S, S]`` (broadcast over
  heads), added to the logits of every encoder layer.
- ``"rotary"``: rotation angles ``[B, S, pe.out_dim // 2]``; :func:`apply_rotary` rotates the
  channel pairs ``(2k, 2k + 1)`` of every head's queries and keys by them.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from routecli.pe.batch import RouteBatch

NLP_BASE = 10_000.0  # lambda of Vaswani et al. (2017)


class PositionalEncoding(nn.Module):
    """Base class: ``kind`` in {"node", "bias", "rotary"}; ``out_dim`` is the width of a node
    encoding (0 for NoPE), the rotated per-head width of a rotary one, 0 for a bias."""

    kind: ClassVar[str] = "node"

    def __init__(self, out_dim: int, num_heads: int = 1):
        super().__init__()
        self.out_dim = out_dim
        self.num_heads = num_heads

    def forward(self, batch: RouteBatch) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError


def geometric_frequencies(pairs: int, dim: int, base: float = NLP_BASE) -> torch.Tensor:
    """``omega_k = base^(-2k / dim)`` for ``k = 0..pairs-1`` (Vaswani et al. 2017). ``[pairs]``."""
    return base ** (-2.0 * torch.arange(pairs, dtype=torch.float32) / dim)


def sincos(phase: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """Interleaved ``[sin(w_0 p), cos(w_0 p), sin(w_1 p), ...]`` of phases ``[B, S]`` -> ``[B, S,
    2 * len(freqs)]`` (channel ``2k`` is a sine, ``2k + 1`` its cosine)."""
    angle = phase[..., None] * freqs  # [B, S, K]
    return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(-2)


def even_dim(name: str, dim: int) -> int:
    if dim <= 0 or dim % 2:
        raise ValueError(f"{name} pairs sine and cosine channels: dim must be even and > 0, "
                         f"got {dim}")
    return dim


def pad_to(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Zero-pad (or truncate) the last axis of ``x`` to ``dim`` channels."""
    if x.shape[-1] >= dim:
        return x[..., :dim]
    return torch.nn.functional.pad(x, (0, dim - x.shape[-1]))


def masked(x: torch.Tensor, batch: RouteBatch) -> torch.Tensor:
    """Zero a per-slot ``[B, S, D]`` tensor on padding slots."""
    return x * batch.mask[..., None].to(x.dtype)


def pair_mask(batch: RouteBatch) -> torch.Tensor:
    """``[B, 1, S, S]`` bool: both slots of the pair are real."""
    return (batch.mask[:, :, None] & batch.mask[:, None, :])[:, None]


def apply_rotary(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate channel pairs ``(2k, 2k+1)`` of ``x`` ``[B, H, S, Dh]`` by ``angles`` ``[B, S,
    Dh/2]`` (RoPE, Su et al. 2024): ``(a, b) -> (a cos t - b sin t, a sin t + b cos t)``."""
    cos, sin = angles.cos()[:, None], angles.sin()[:, None]  # [B, 1, S, Dh/2]
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
