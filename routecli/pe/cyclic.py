"""Routing-specific cyclic encodings of prior work (PE paper Appendix D). Both are periodic in
the within-route index (``PE(i) = PE(i + L)``, so the two depot ends of a route coincide) but
index-based: they ignore travel distance (D1) and route membership (D3).

- ``dact`` (node): ``W Gray(i mod L)``, the bits of the reflected Gray code as +-1 through a
  learnable linear map ``W`` to D (Ma et al. 2021).
- ``cycleformer`` (node): ``[sin(2 pi (i mod L) / L w_k), cos(2 pi (i mod L) / L w_k)]`` with
  ``w_k = 10000^(-2k/D)`` (Yook et al. 2024).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from routecli.pe.base import PositionalEncoding, even_dim, geometric_frequencies, masked, sincos
from routecli.pe.batch import RouteBatch


def gray_bits(index: torch.Tensor, bits: int) -> torch.Tensor:
    """Reflected binary Gray code ``g = i xor (i >> 1)`` of ``index`` as ``+-1`` bits, least
    significant first. ``[...] -> [..., bits]``; consecutive codes differ in exactly one bit."""
    code = index ^ (index >> 1)
    shifts = torch.arange(bits, device=index.device)
    return ((code[..., None] >> shifts) & 1).float() * 2.0 - 1.0


def cyclic_index(batch: RouteBatch) -> torch.Tensor:
    """``i mod L`` (the depot's return visit ``i = L`` wraps to ``0``). ``[B, S]`` long."""
    return batch.pos % batch.length.clamp_min(1)


class DACTCyclicPE(PositionalEncoding):
    """DACT cyclic PE: ``W Gray(i mod L)`` with a learnable ``W`` ``[bits, D]``. ``[B, S, D]``."""

    kind = "node"

    def __init__(self, dim: int, num_heads: int = 1, max_len: int = 256):
        super().__init__(dim, num_heads)
        self.bits = max(1, math.ceil(math.log2(max_len + 1)))
        self.proj = nn.Linear(self.bits, dim, bias=False)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        return masked(self.proj(gray_bits(cyclic_index(batch), self.bits)), batch)


class CycleFormerPE(PositionalEncoding):
    """CycleFormer circular PE: sinusoid of the wrapped phase ``2 pi (i mod L) / L`` with the SIN
    frequency schedule. ``[B, S, D]``."""

    kind = "node"
    freqs: torch.Tensor  # buffer

    def __init__(self, dim: int, num_heads: int = 1):
        super().__init__(even_dim("cycleformer", dim), num_heads)
        self.register_buffer("freqs", geometric_frequencies(dim // 2, dim), persistent=False)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        phase = 2 * math.pi * cyclic_index(batch).float() / batch.length.clamp_min(1).float()
        return masked(sincos(phase, self.freqs), batch)
