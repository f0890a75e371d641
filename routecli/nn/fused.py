"""Elementwise kernels of the AAFM block, written once and run eagerly or fused by the compiler.

A rollout calls the policy once per construction step, so a CPU training step is bound by the
elementwise work on ``[B, R, D]`` tensors, not by the matrix products: each eager operation
reads and writes its operands once. The functions below are the elementwise parts of the
forward and backward passes of :mod:`routecli.nn.aafm` (no autograd, no matrix products, no
boolean outputs), each meant as one loop. Inside :func:`compiled` they run as
``torch.compile`` (inductor's C++ backend, dynamic shapes), which turns each into one or two
vectorised passes with float32 arithmetic inside and the storage dtype outside; it needs a C++
compiler, and when compilation fails the eager versions are used, with one warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

EXP_FLOOR = 80.0  # exp(-80) ~ 1.8e-35, still a normal float32
DEN_FLOOR = 1e-30  # a row with no admissible key returns zeros instead of 0/0

_compiled = False


@contextmanager
def compiled(enabled: bool = True) -> Iterator[None]:
    """Run the kernels compiled (on CPU tensors) inside the block. Scoped, so that a training
    run in a process never leaves later inference paying for compilation it did not ask for."""
    global _compiled
    previous, _compiled = _compiled, enabled
    try:
        yield
    finally:
        _compiled = previous


def active(x: Tensor) -> bool:
    """Whether kernels on ``x`` run compiled (see :func:`compiled`)."""
    return _compiled and x.device.type == "cpu"


def wide(dtype: torch.dtype) -> torch.dtype:
    """The dtype arithmetic runs in: float32, or float64 for float64."""
    return torch.promote_types(dtype, torch.float32)


class Kernel:
    """A pure tensor function, eager or (inside :func:`compiled`) compiled on first use."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.compiled: Callable[..., Any] | None = None
        self.failed = False

    def __call__(self, *args: Any) -> Any:
        if self.failed or not active(args[0]):
            return self.fn(*args)
        if self.compiled is None:
            self.compiled = torch.compile(self.fn, dynamic=True)
            try:
                return self.compiled(*args)
            except Exception as err:  # no C++ compiler, unsupported platform...
                self.failed = True
                warnings.warn(f"fused kernel {self.fn.__name__} unavailable, running eagerly "
                              f"({type(err).__name__}: {str(err).splitlines()[0][:200]})",
                              stacklevel=2)
                return self.fn(*args)
        return self.compiled(*args)


def _finite_or_zero(x: Tensor) -> Tensor:
    return torch.where(torch.isfinite(x), x, torch.zeros_like(x))


@Kernel
def pair_weights(bias: Tensor, alpha: Tensor, excluded: Tensor, dtype: torch.dtype) -> Tensor:
    """``exp(alpha B - max_j alpha B)`` over admissible pairs (0 on excluded ones), exponents
    floored at ``-EXP_FLOOR``. bias ``[B, Rq, Rk]`` finite, alpha ``[]``; returns ``dtype``."""
    logits = bias * alpha
    row_max = _finite_or_zero(logits.masked_fill(excluded, float("-inf")).amax(-1, keepdim=True))
    weights = torch.exp((logits - row_max).clamp_min(-EXP_FLOOR)).masked_fill(excluded, 0.0)
    return weights.to(dtype)


@Kernel
def channel_weights(k: Tensor, v: Tensor, key_valid: Tensor) -> Tensor:
    """``[exp(K - max_j K) * V || exp(K - max_j K)]`` ``[B, Rk, 2D]`` in ``v``'s dtype; the
    maximum runs over valid keys, padded keys are capped at 1 (their pair weight is zero)."""
    kw = k.to(wide(k.dtype))
    k_max = kw.masked_fill(~key_valid[..., None], float("-inf")).amax(-2, keepdim=True)
    exp_k = torch.exp((kw - _finite_or_zero(k_max)).clamp(-EXP_FLOOR, 0.0))
    return torch.cat([exp_k * v.to(exp_k.dtype), exp_k], -1).to(v.dtype)


def _ratio(both: Tensor) -> tuple[Tensor, Tensor]:
    """numerator / denominator and the floored denominator, from ``[B, Rq, 2D]``."""
    d = both.shape[-1] // 2
    num, den = both[..., :d].to(wide(both.dtype)), both[..., d:].to(wide(both.dtype))
    den = den.clamp_min(DEN_FLOOR)
    return num / den, den


@Kernel
def aafm_output(both: Tensor, q: Tensor) -> Tensor:
    """``sigmoid(Q) * numerator / denominator`` from the product ``[B, Rq, 2D]``."""
    ratio, _ = _ratio(both)
    return (torch.sigmoid(q.to(ratio.dtype)) * ratio).to(q.dtype)


@Kernel
def aafm_grad_both(grad: Tensor, both: Tensor, q: Tensor) -> tuple[Tensor, Tensor]:
    """Gradients of the output with respect to ``numerator || denominator`` and ``Q``."""
    ratio, den = _ratio(both)
    gate = torch.sigmoid(q.to(ratio.dtype))
    g = grad.to(ratio.dtype) * gate
    d_num = g / den
    grad_both = torch.cat([d_num, -d_num * ratio], -1).to(both.dtype)
    return grad_both, (g * ratio * (1 - gate)).to(q.dtype)


@Kernel
def aafm_grad_kv(grad_packed: Tensor, packed: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """Gradients with respect to ``K`` and ``V`` from the one with respect to the packed
    channel weights (the shift by the channel maximum cancels)."""
    d = v.shape[-1]
    dtype = wide(v.dtype)
    g_num, g_den = grad_packed[..., :d].to(dtype), grad_packed[..., d:].to(dtype)
    exp_k = packed[..., d:].to(dtype)
    grad_k = (g_num * v.to(dtype) + g_den) * exp_k
    return grad_k.to(v.dtype), (g_num * exp_k).to(v.dtype)


@Kernel
def pair_grad(grad_weights: Tensor, weights: Tensor, bias: Tensor,
              alpha: Tensor) -> tuple[Tensor, Tensor]:
    """Gradients with respect to the bias ``[B, Rq, Rk]`` and to ``alpha`` (the row shift
    cancels)."""
    g_logits = grad_weights.to(bias.dtype) * weights.to(bias.dtype)
    return g_logits * alpha, (g_logits * bias).sum()


@Kernel
def norm_forward(x: Tensor, residual: Tensor, weight: Tensor,
                 eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """RMSNorm of ``x + residual`` over the last dimension: output, normalised rows (both in
    ``x``'s dtype) and the inverse RMS ``[..., 1]``."""
    s = x.to(wide(x.dtype)) + residual.to(wide(x.dtype))
    inv = torch.rsqrt(s.square().mean(-1, keepdim=True) + eps)
    normed = s * inv
    return (normed * weight).to(x.dtype), normed.to(x.dtype), inv


@Kernel
def norm_backward(grad: Tensor, normed: Tensor, inv: Tensor,
                  weight: Tensor) -> tuple[Tensor, Tensor]:
    """Gradients of :func:`norm_forward` with respect to ``x + residual`` and the gain."""
    n, g = normed.to(inv.dtype), grad.to(inv.dtype)
    grad_weight = (g * n).flatten(0, -2).sum(0)
    gn = g * weight.to(inv.dtype)
    grad_s = (gn - n * (gn * n).mean(-1, keepdim=True)) * inv
    return grad_s.to(grad.dtype), grad_weight.to(weight.dtype)


def _rows(x: Tensor) -> Tensor:
    """``[B, R, C] -> [B * R, C]``."""
    return x.flatten(0, -2)


@Kernel
def block_forward(h: Tensor, bias: Tensor, alpha: Tensor, excluded: Tensor, valid: Tensor,
                  w_q: Tensor, w_k: Tensor, w_v: Tensor, gain_attn: Tensor, w_ff1: Tensor,
                  b_ff1: Tensor, w_ff2: Tensor, b_ff2: Tensor, gain_ff: Tensor,
                  eps: float) -> tuple[Tensor, ...]:
    """One AAFM block (see :class:`routecli.nn.aafm.AAFMBlock`) in ``h``'s dtype: its output
    ``[B, R, D]`` and what :func:`block_backward` needs (QKV, pair and channel weights, the
    AAFM product, normalised rows and inverse RMS of both norms, the FFN hidden layer)."""
    dtype, d = h.dtype, h.shape[-1]
    qkv = F.linear(h, torch.cat([w_q, w_k, w_v]).to(dtype))  # [B, R, 3D]
    q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
    weights = pair_weights.fn(bias, alpha, excluded, dtype)  # [B, R, R]
    packed = channel_weights.fn(k, v, valid)  # [B, R, 2D]
    both = torch.bmm(weights, packed)  # [B, R, 2D]
    attn = aafm_output.fn(both, q)
    mid, normed_attn, inv_attn = norm_forward.fn(attn, h, gain_attn, eps)
    hidden = torch.relu(F.linear(mid, w_ff1.to(dtype), b_ff1.to(dtype)))  # [B, R, FF]
    ff = F.linear(hidden, w_ff2.to(dtype), b_ff2.to(dtype))
    out, normed_ff, inv_ff = norm_forward.fn(ff, mid, gain_ff, eps)
    return out, qkv, weights, packed, both, normed_attn, inv_attn, hidden, normed_ff, inv_ff


@Kernel
def block_inference(h: Tensor, bias: Tensor, alpha: Tensor, excluded: Tensor, valid: Tensor,
                    w_q: Tensor, w_k: Tensor, w_v: Tensor, gain_attn: Tensor, w_ff1: Tensor,
                    b_ff1: Tensor, w_ff2: Tensor, b_ff2: Tensor, gain_ff: Tensor,
                    eps: float) -> Tensor:
    """The output of :func:`block_forward` alone (decoding: nothing kept for backward)."""
    return block_forward.fn(h, bias, alpha, excluded, valid, w_q, w_k, w_v, gain_attn, w_ff1,
                            b_ff1, w_ff2, b_ff2, gain_ff, eps)[0]


@Kernel
def block_backward(grad: Tensor, h: Tensor, bias: Tensor, alpha: Tensor, w_q: Tensor,
                   w_k: Tensor, w_v: Tensor, gain_attn: Tensor, w_ff1: Tensor, w_ff2: Tensor,
                   gain_ff: Tensor, qkv: Tensor, weights: Tensor, packed: Tensor, both: Tensor,
                   normed_attn: Tensor, inv_attn: Tensor, hidden: Tensor, normed_ff: Tensor,
                   inv_ff: Tensor) -> tuple[Tensor, ...]:
    """Gradients of :func:`block_forward` with respect to ``h``, alpha and the weights
    (returned in the dtype of each), from the gradient of its output."""
    dtype, d = h.dtype, h.shape[-1]
    g_ff, g_gain_ff = norm_backward.fn(grad, normed_ff, inv_ff, gain_ff)  # d/d(FFN + mid)
    mid = (normed_attn.to(inv_attn.dtype) * gain_attn).to(dtype)  # the first norm's output
    g_w_ff2 = _rows(g_ff).T @ _rows(hidden)
    g_b_ff2 = _rows(g_ff).sum(0, dtype=inv_ff.dtype)
    g_hidden = torch.where(hidden > 0, g_ff @ w_ff2.to(dtype), 0.0)  # through the ReLU
    g_w_ff1 = _rows(g_hidden).T @ _rows(mid)
    g_b_ff1 = _rows(g_hidden).sum(0, dtype=inv_ff.dtype)
    g_mid = g_hidden @ w_ff1.to(dtype) + g_ff
    g_attn, g_gain_attn = norm_backward.fn(g_mid, normed_attn, inv_attn, gain_attn)
    q, v = qkv[..., :d], qkv[..., 2 * d:]
    grad_both, g_q = aafm_grad_both.fn(g_attn, both, q)
    grad_weights = torch.bmm(grad_both, packed.transpose(1, 2))  # [B, R, R]
    grad_packed = torch.bmm(weights.transpose(1, 2), grad_both)  # [B, R, 2D]
    g_k, g_v = aafm_grad_kv.fn(grad_packed, packed, v)
    _, g_alpha = pair_grad.fn(grad_weights, weights, bias, alpha)
    g_qkv = torch.cat([g_q, g_k, g_v], -1)  # [B, R, 3D]
    g_w_qkv = _rows(g_qkv).T @ _rows(h)  # [3D, D]
    g_h = g_qkv @ torch.cat([w_q, w_k, w_v]).to(dtype) + g_attn
    g_w_q, g_w_k, g_w_v = g_w_qkv.split(d)
    params = (w_q, w_k, w_v, gain_attn, w_ff1, w_ff1, w_ff2, w_ff2, gain_ff)
    grads = (g_w_q, g_w_k, g_w_v, g_gain_attn, g_w_ff1, g_b_ff1, g_w_ff2, g_b_ff2, g_gain_ff)
    return (g_h, g_alpha.to(alpha.dtype), *(g.to(p.dtype) for g, p in zip(grads, params)))
