"""NLP-originated encodings (PE paper Section 3.2 and Appendix D), indexed by the within-route
position ``i`` of each slot (depot ``0``), so nodes of different routes at the same ``i``
receive the same encoding; none of them sees distances, circularity or route membership.

| name  | kind   | formula                                                                  |
|-------|--------|--------------------------------------------------------------------------|
| nope  | node   | empty vector ``[B, S, 0]``                                               |
| ape   | node   | ``E[i]``, learnable ``E in R^{(L_max + 1) x D}`` (``i`` clipped to L_max)|
| sin   | node   | ``[sin(i w_k), cos(i w_k)]_k``, ``w_k = 10000^(-2k/D)``                  |
| rope  | rotary | angles ``i w_k`` rotating query/key pairs ``(2k, 2k+1)``; logits depend on ``i - j`` only |
| rpe   | bias   | ``b[clip(i - j, -W, W)]``, learnable, shared by heads ``[B, 1, S, S]``   |
| alibi | bias   | ``-m_h |i - j|``, slopes ``m_h`` of Press et al. (2021) ``[B, H, S, S]``  |
"""

from __future__ import annotations

import math

import torch
from torch import nn

from routecli.pe.base import (
    PositionalEncoding,
    even_dim,
    geometric_frequencies,
    masked,
    pair_mask,
    sincos,
)
from routecli.pe.batch import RouteBatch


class NoPE(PositionalEncoding):
    """No positional signal: an empty ``[B, S, 0]`` vector, so ``FF([x || PE]) = FF(x)``."""

    kind = "node"

    def __init__(self, dim: int = 0, num_heads: int = 1):
        super().__init__(0, num_heads)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        return batch.coords.new_zeros(batch.batch_size, batch.num_slots, 0)


class AbsolutePE(PositionalEncoding):
    """APE (Gehring et al. 2017): learnable ``E[i]`` per within-route position. ``[B, S, D]``."""

    kind = "node"

    def __init__(self, dim: int, num_heads: int = 1, max_len: int = 256):
        super().__init__(dim, num_heads)
        self.max_len = max_len
        self.table = nn.Embedding(max_len + 1, dim)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        return masked(self.table(batch.pos.clamp(max=self.max_len)), batch)


class SinusoidalPE(PositionalEncoding):
    """SIN (Vaswani et al. 2017): ``PE_2k = sin(i w_k)``, ``PE_2k+1 = cos(i w_k)``,
    ``w_k = 10000^(-2k/D)``. ``[B, S, D]``."""

    kind = "node"
    freqs: torch.Tensor  # buffer

    def __init__(self, dim: int, num_heads: int = 1):
        super().__init__(even_dim("sin", dim), num_heads)
        self.register_buffer("freqs", geometric_frequencies(dim // 2, dim), persistent=False)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        return masked(sincos(batch.pos.float(), self.freqs), batch)


class RotaryPE(PositionalEncoding):
    """RoPE (Su et al. 2024): rotation angles ``theta_{i,k} = i w_k`` for each channel pair of a
    head of width ``dim`` (``w_k = 10000^(-2k/dim)``). Returns ``[B, S, dim/2]``; apply with
    :func:`routecli.pe.base.apply_rotary` so that ``q_i . k_j`` depends only on ``i - j``."""

    kind = "rotary"
    freqs: torch.Tensor  # buffer

    def __init__(self, dim: int, num_heads: int = 1):
        super().__init__(even_dim("rope", dim), num_heads)
        self.register_buffer("freqs", geometric_frequencies(dim // 2, dim), persistent=False)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        return batch.pos.float()[..., None] * self.freqs * batch.mask[..., None]


class RelativePE(PositionalEncoding):
    """RPE (Shaw et al. 2018): learnable logit bias ``b[clip(i - j, -W, W)]`` shared by all heads.
    ``[B, 1, S, S]`` (zero on pairs with a padding slot)."""

    kind = "bias"

    def __init__(self, dim: int = 0, num_heads: int = 1, window: int = 16):
        super().__init__(0, num_heads)
        self.window = window
        self.table = nn.Parameter(torch.randn(2 * window + 1) * 0.02)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        offset = (batch.pos[:, :, None] - batch.pos[:, None, :]).clamp(-self.window, self.window)
        return self.table[offset + self.window][:, None] * pair_mask(batch)


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """Head slopes of Press et al. (2021): ``2^(-8h/n)`` for ``h = 1..n`` with ``n`` the power of
    two at or below ``num_heads``; further heads take every other slope of the ``2n`` schedule."""
    n = 2 ** math.floor(math.log2(num_heads))
    slopes = [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]
    extra = [2.0 ** (-8.0 * h / (2 * n)) for h in range(1, 2 * n + 1, 2)]
    return torch.tensor(slopes + extra[: num_heads - n])


class ALiBiBias(PositionalEncoding):
    """ALiBi (Press et al. 2021): fixed bias ``-m_h |i - j|`` per head. ``[B, H, S, S]``."""

    kind = "bias"
    slopes: torch.Tensor  # buffer

    def __init__(self, dim: int = 0, num_heads: int = 8):
        super().__init__(0, num_heads)
        self.register_buffer("slopes", alibi_slopes(num_heads), persistent=False)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        gap = (batch.pos[:, :, None] - batch.pos[:, None, :]).abs().float()[:, None]
        return -self.slopes[None, :, None, None] * gap * pair_mask(batch)
