"""Adaptation attention free module (AAFM, MiLoop Appendix B.4) and the post-norm block of Eq. 1.

AAFM replaces dot-product attention by a feature-wise weighted average whose weights are
``exp(B_ij) * exp(K_jc)``: the pairwise bias ``B`` carries the geometry, the keys pick channels,
and ``sigmoid(Q)`` gates the result (Eq. 28). Excluded pairs (self-interactions, padding) get
no weight.

Speed: a rollout calls the block once per construction step, so the elementwise work on
``[B, R, D]`` tensors, not the matrix products, bounds a CPU training step. The block's
arithmetic lives in :mod:`routecli.nn.fused` as plain tensor functions; with compiled kernels
on (:func:`routecli.nn.fused.compiled`) a training step runs each block as one autograd
node with a hand-written backward, two compiled calls that keep ten tensors per block, with
float32 arithmetic inside and the storage dtype (bfloat16 under a bfloat16 autocast) outside.
Otherwise autograd records the same functions op by op.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from routecli.nn import fused
from routecli.nn.fused import wide
from routecli.nn.roles import compute_dtype


class RMSNorm(nn.Module):
    """Root-mean-square normalisation of a residual sum with a learnable per-channel gain:
    ``forward(x, r)`` normalises ``x + r``."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor, residual: Tensor) -> Tensor:
        return fused.norm_forward(x, residual, self.weight, self.eps)[0]


class _AAFM(torch.autograd.Function):
    """Eq. 28 as one autograd node (see :func:`aafm`)."""

    @staticmethod
    def forward(ctx: Any, q: Tensor, k: Tensor, v: Tensor, bias: Tensor, alpha: Tensor,
                excluded: Tensor, key_valid: Tensor) -> Tensor:
        with torch.autocast(q.device.type, enabled=False):
            weights = fused.pair_weights(bias, alpha, excluded, v.dtype)  # [B, Rq, Rk]
            packed = fused.channel_weights(k, v, key_valid)  # [B, Rk, 2D]
            both = torch.bmm(weights, packed)  # [B, Rq, 2D]: numerator || denominator
            ctx.save_for_backward(q, v, bias, alpha, weights, packed, both)
            return fused.aafm_output(both, q)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        q, v, bias, alpha, weights, packed, both = ctx.saved_tensors
        grad_both, grad_q = fused.aafm_grad_both(grad, both, q)
        grad_weights = torch.bmm(grad_both, packed.transpose(1, 2))  # [B, Rq, Rk]
        grad_packed = torch.bmm(weights.transpose(1, 2), grad_both)  # [B, Rk, 2D]
        grad_k, grad_v = fused.aafm_grad_kv(grad_packed, packed, v)
        grad_bias, grad_alpha = fused.pair_grad(grad_weights, weights, bias, alpha)
        return grad_q, grad_k, grad_v, grad_bias, grad_alpha, None, None


def aafm(q: Tensor, k: Tensor, v: Tensor, bias: Tensor, key_valid: Tensor,
         excluded: Tensor | None = None, alpha: Tensor | None = None) -> Tensor:
    """``sigmoid(Q) * (exp(B) (exp(K) * V)) / (exp(B) exp(K))`` (Eq. 28), computed stably.

    q ``[B, Rq, D]``, k and v ``[B, Rk, D]``, bias ``[B, Rq, Rk]``, key_valid ``[B, Rk]``
    (padding False); excluded ``[B, Rq, Rk]``: pairs that get no weight (default: the ``-inf``
    entries of ``bias`` and the padded keys; when given, it must hold the padded keys and
    ``bias`` must be finite); alpha ``[]``: a coefficient of the bias (Eq. 29). Returns
    ``[B, Rq, D]`` in the dtype of ``v``.

    The row maximum of ``B`` over admissible pairs and the per-channel maximum of ``K`` over
    valid keys cancel between numerator and denominator, so subtracting them changes nothing
    but the range of the exponentials (and the gradient ignores them). Exponents are floored
    at ``-EXP_FLOOR`` (a relative weight below 1e-35 is noise either way): on a CPU, exp of a
    very negative float and arithmetic on the denormals it returns run an order of magnitude
    slower. A row with no admissible key returns zeros instead of 0/0.
    """
    if excluded is None:
        excluded = torch.isneginf(bias) | ~key_valid[:, None, :]
        bias = bias.masked_fill(excluded, 0.0)
    bias = bias.to(wide(bias.dtype))
    if alpha is None:
        alpha = torch.ones((), dtype=bias.dtype, device=bias.device)
    dtype = v.dtype
    return _AAFM.apply(q.to(dtype), k.to(dtype), v, bias, alpha.to(bias.dtype), excluded,
                       key_valid)


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
        valid ``[B, R]``. Returns ``[B, R, D]`` in the compute dtype (bfloat16 under a
        bfloat16 autocast)."""
        h = h.to(compute_dtype(h))
        args = (unit_bias.to(wide(unit_bias.dtype)), excluded, valid, self.norm_attn.eps,
                self.alpha, self.w_q.weight, self.w_k.weight, self.w_v.weight,
                self.norm_attn.weight, self.ff[0].weight, self.ff[0].bias, self.ff[2].weight,
                self.ff[2].bias, self.norm_ff.weight)
        if torch.is_grad_enabled() and fused.active(h):
            return _Block.apply(h, *args)
        with torch.autocast(h.device.type, enabled=False):  # eager: autograd records the ops
            bias, excluded, valid, eps, *params = args
            return fused.block_inference(h, bias, params[0], excluded, valid, *params[1:], eps)


class _Block(torch.autograd.Function):
    """:class:`AAFMBlock` as one autograd node over :func:`routecli.nn.fused.block_forward`
    and :func:`~routecli.nn.fused.block_backward` (weight gradients in float32 per call, so
    that a rollout's hundreds of steps sum them at full precision)."""

    @staticmethod
    def forward(ctx: Any, h: Tensor, bias: Tensor, excluded: Tensor, valid: Tensor, eps: float,
                alpha: Tensor, *weights: Tensor) -> Tensor:
        with torch.autocast(h.device.type, enabled=False):
            out, *saved = fused.block_forward(h, bias, alpha, excluded, valid, *weights, eps)
        w_q, w_k, w_v, gain_attn, w_ff1, _, w_ff2, _, gain_ff = weights
        ctx.save_for_backward(h, bias, alpha, w_q, w_k, w_v, gain_attn, w_ff1, w_ff2, gain_ff,
                              *saved)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        g_h, *g_params = fused.block_backward(grad.contiguous(), *ctx.saved_tensors)
        return g_h, None, None, None, None, *g_params
