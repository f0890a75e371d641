"""Adaptation attention free module (AAFM, MiLoop Appendix B.4) and the post-norm block of Eq. 1.

AAFM replaces dot-product attention by a feature-wise weighted average whose weights are
``exp(B_ij) * exp(K_jc)``: the pairwise bias ``B`` carries the geometry, the keys pick channels,
and ``sigmoid(Q)`` gates the result (Eq. 28). ``-inf`` entries of ``B`` remove a key from row
``i`` (self-interactions, padding).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

EXP_FLOOR = 80.0  # exp(-80) ~ 1.8e-35, still a normal float32


class RMSNorm(nn.Module):
    """Root-mean-square normalisation with a learnable per-channel gain."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def aafm(q: Tensor, k: Tensor, v: Tensor, bias: Tensor, key_valid: Tensor) -> Tensor:
    """``sigmoid(Q) * (exp(B) (exp(K) * V)) / (exp(B) exp(K))`` (Eq. 28), computed stably.

    q ``[B, Rq, D]``, k and v ``[B, Rk, D]``, bias ``[B, Rq, Rk]`` (``-inf`` = excluded pair),
    key_valid ``[B, Rk]`` (padding False). Returns ``[B, Rq, D]``.

    The row maximum of ``B`` and the per-channel maximum of ``K`` over valid keys cancel between
    numerator and denominator, so subtracting them changes nothing but the range of the
    exponentials. Exponents are floored at ``-EXP_FLOOR`` (a relative weight below 1e-35 is
    noise either way): on a CPU, exp of a very negative float and arithmetic on the denormals
    it returns run an order of magnitude slower. A row with no admissible key returns zeros
    instead of 0/0.
    """
    q, k, v, bias = q.float(), k.float(), v.float(), bias.float()
    admissible = bias > float("-inf")  # [B, Rq, Rk]
    bias_max = bias.amax(-1, keepdim=True).nan_to_num(neginf=0.0)  # [B, Rq, 1]
    weights = torch.exp((bias - bias_max).clamp_min_(-EXP_FLOOR)) * admissible  # [B, Rq, Rk]
    valid = key_valid[..., None]  # [B, Rk, 1]
    k_max = k.masked_fill(~valid, float("-inf")).amax(1, keepdim=True)  # [B, 1, D]
    exp_k = torch.exp((k - k_max.nan_to_num(neginf=0.0)).clamp_min_(-EXP_FLOOR)) * valid  # [B, Rk, D]
    numerator = weights @ (exp_k * v)  # [B, Rq, D]
    denominator = weights @ exp_k  # [B, Rq, D]
    return torch.sigmoid(q) * numerator / denominator.clamp_min(1e-30)


def pairwise_distance(coords: Tensor) -> Tensor:
    """Euclidean distances between all rows. ``[B, R, 2] -> [B, R, R]``."""
    return torch.cdist(coords, coords, compute_mode="donot_use_mm_for_euclid_dist")


def scale_distance_bias(distance: Tensor, valid: Tensor, num_candidates: Tensor,
                        gamma: Tensor | float = 1.0) -> tuple[Tensor, Tensor]:
    """The unit-coefficient scale-distance bias ``-gamma log2|A_t| ||x_i - x_j||`` (Eq. 29).

    distance ``[B, R, R]``, valid ``[B, R]`` (padding False), num_candidates ``[B]`` = |A_t|.
    Returns the finite bias ``[B, R, R]`` and the excluded pairs ``[B, R, R]`` (self-interactions
    and padded keys), kept apart so that each layer's alpha never multiplies an infinity
    (whose gradient would be NaN).
    """
    scale = torch.log2(num_candidates.float().clamp_min(1.0)) * gamma  # [B]
    bias = -scale[:, None, None] * distance  # [B, R, R]
    rows = distance.shape[1]
    eye = torch.eye(rows, dtype=torch.bool, device=distance.device)
    excluded = eye[None] | ~valid[:, None, :]
    return bias, excluded


class AAFMBlock(nn.Module):
    """One attention layer of Eq. 1 with AAFM as the attention operator (Eq. 27-29).

    ``h = RMSNorm(h + AAFM(hW_Q, hW_K, hW_V; alpha * B))``, then
    ``h = RMSNorm(h + FFN(h))``; alpha is this layer's learnable bias coefficient (init 1).
    """

    def __init__(self, dim: int = 128, ff_dim: int = 512):
        super().__init__()
        self.w_q = nn.Linear(dim, dim, bias=False)
        self.w_k = nn.Linear(dim, dim, bias=False)
        self.w_v = nn.Linear(dim, dim, bias=False)
        self.alpha = nn.Parameter(torch.ones(()))
        self.norm_attn = RMSNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, ff_dim), nn.ReLU(), nn.Linear(ff_dim, dim))
        self.norm_ff = RMSNorm(dim)

    def forward(self, h: Tensor, unit_bias: Tensor, excluded: Tensor, valid: Tensor) -> Tensor:
        """h ``[B, R, D]``; unit_bias, excluded ``[B, R, R]`` from :func:`scale_distance_bias`;
        valid ``[B, R]``."""
        bias = (self.alpha * unit_bias).masked_fill(excluded, float("-inf"))
        attn = aafm(self.w_q(h), self.w_k(h), self.w_v(h), bias, valid).to(h.dtype)
        h = self.norm_attn(h + attn)
        return self.norm_ff(h + self.ff(h))
