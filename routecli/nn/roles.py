"""Role-specific linear maps over ``[first, current, candidates...]`` rows (MiLoop Eq. 4, 6).

Row 0 goes through one weight, row 1 through another and rows 2.. through a third. Written as
three linears on row slices, autograd would turn every slice of the ``[B, R, D]`` input into a
zero-filled ``[B, R, D]`` gradient plus a copy; this single autograd node runs one matrix
product over all rows and patches rows 0 and 1, forward and backward.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def compute_dtype(x: Tensor) -> torch.dtype:
    """The dtype a matrix product on ``x`` runs in: the autocast dtype when autocast is on for
    ``x``'s device, else ``x``'s own."""
    device = x.device.type
    return torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else x.dtype


class _RoleLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, w_first: Tensor, w_last: Tensor, w_rest: Tensor,
                b_first: Tensor | None, b_last: Tensor | None, b_rest: Tensor | None) -> Tensor:
        dtype = compute_dtype(x)
        with torch.autocast(x.device.type, enabled=False):
            x = x.to(dtype)
            w = [t.to(dtype) for t in (w_first, w_last, w_rest)]
            b = [None if t is None else t.to(dtype) for t in (b_first, b_last, b_rest)]
            out = F.linear(x, w[2], b[2])  # [B, R, Dout]
            first, last = x[:, 0].contiguous(), x[:, 1].contiguous()  # [B, Din]; a strided
            out[:, 0] = F.linear(first, w[0], b[0])  # bfloat16 product is many times slower
            out[:, 1] = F.linear(last, w[1], b[1])
        ctx.save_for_backward(x, first, last, *w)
        ctx.param_dtype = w_rest.dtype
        ctx.has_bias = b_rest is not None
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, first, last, w_first, w_last, w_rest = ctx.saved_tensors
        grad = grad.to(x.dtype)
        g_first, g_last = grad[:, 0].contiguous(), grad[:, 1].contiguous()  # [B, Dout]
        grad_x = grad @ w_rest  # [B, R, Din]
        grad_x[:, 0] = g_first @ w_first
        grad_x[:, 1] = g_last @ w_last
        rest = grad.clone()
        rest[:, :2] = 0
        grad_w = [g_first.T @ first, g_last.T @ last, rest.flatten(0, 1).T @ x.flatten(0, 1)]
        grad_b: list[Tensor | None] = [None, None, None]
        if ctx.has_bias:
            grad_b = [g_first.sum(0), g_last.sum(0), rest.flatten(0, 1).sum(0)]
        dtype = ctx.param_dtype
        return (grad_x, *(g.to(dtype) for g in grad_w),
                *(None if g is None else g.to(dtype) for g in grad_b))


def role_linear(x: Tensor, first: nn.Linear, last: nn.Linear, rest: nn.Linear) -> Tensor:
    """``x`` ``[B, R, Din]`` -> ``[B, R, Dout]``: row 0 through ``first``, row 1 through
    ``last``, rows 2.. through ``rest`` (the three share their shapes and bias setting)."""
    return _RoleLinear.apply(x, first.weight, last.weight, rest.weight,
                             first.bias, last.bias, rest.bias)
