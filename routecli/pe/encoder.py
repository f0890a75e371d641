"""A Transformer encoder that consumes any registered PE (PE paper Section 4.3 / Appendix D):

- node PEs: ``h0 = FF([x || PE(v)])``, a shared two-layer feed-forward projection;
- bias PEs: the bias is added to the attention logits of every layer;
- rotary PEs: every layer rotates its queries and keys by the PE's angles.

Pre-norm blocks; padding slots are masked out as attention keys.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from routecli.pe.base import PositionalEncoding, apply_rotary
from routecli.pe.batch import RouteBatch
from routecli.pe.kinds import KINDS, model_inputs, node_channels


class PEAttention(nn.Module):
    """Multi-head self-attention with an optional additive logit bias and rotary angles."""

    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim, bias=False)
        self.out = nn.Linear(embed_dim, embed_dim)

    def forward(self, h: torch.Tensor, key_mask: torch.Tensor, bias: torch.Tensor | None,
                angles: torch.Tensor | None) -> torch.Tensor:
        b, s, e = h.shape
        q, k, v = self.qkv(h).view(b, s, 3, self.num_heads, self.head_dim).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B, H, S, Dh]
        if angles is not None:
            q, k = apply_rotary(q, angles), apply_rotary(k, angles)
        # fused kernel: several times faster than softmax(q k^T + bias) v on a CPU
        keys = key_mask[:, None, None, :]  # [B, 1, 1, S]
        mask = keys if bias is None else bias.masked_fill(~keys, float("-inf"))
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # [B, H, S, Dh]
        return self.out(att.transpose(1, 2).reshape(b, s, e))  # [B, S, E]


class PEBlock(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int, ff_dim: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(embed_dim)
        self.attn = PEAttention(embed_dim, num_heads)
        self.norm2 = nn.LayerNorm(embed_dim)
        self.ff = nn.Sequential(nn.Linear(embed_dim, ff_dim), nn.ReLU(), nn.Linear(ff_dim, embed_dim))

    def forward(self, h, key_mask, bias, angles):  # noqa: ANN001, ANN201 - see PEEncoder
        h = h + self.attn(self.norm1(h), key_mask, bias, angles)
        return h + self.ff(self.norm2(h))


class PEEncoder(nn.Module):
    """``forward(x [B, S, F], batch) -> [B, S, E]`` with ``pe`` wired in by its kind
    (:mod:`routecli.pe.kinds`).

    A rotary ``pe`` must rotate the per-head width ``embed_dim // num_heads``; a bias ``pe``
    returns ``[B, num_heads | 1, S, S]``.
    """

    def __init__(self, in_dim: int, pe: PositionalEncoding, embed_dim: int = 128,
                 num_heads: int = 8, num_layers: int = 3, ff_dim: int = 512):
        super().__init__()
        if KINDS[pe.kind].width == "head" and pe.out_dim != embed_dim // num_heads:
            raise ValueError(f"a {pe.kind} PE must act on the head width "
                             f"{embed_dim // num_heads}, got {pe.out_dim}")
        self.pe = pe
        self.project = nn.Sequential(nn.Linear(in_dim + node_channels(pe), embed_dim), nn.ReLU(),
                                     nn.Linear(embed_dim, embed_dim))
        self.blocks = nn.ModuleList(PEBlock(embed_dim, num_heads, ff_dim) for _ in range(num_layers))
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x: torch.Tensor, batch: RouteBatch) -> torch.Tensor:
        inputs = model_inputs(self.pe, self.pe(batch))
        if inputs.node is not None:
            x = torch.cat([x, inputs.node], dim=-1)  # [B, S, F + D_pe]
        h = self.project(x)  # [B, S, E]
        for block in self.blocks:
            h = block(h, batch.mask, inputs.bias, inputs.angles)
        return self.norm(h) * batch.mask[..., None]
