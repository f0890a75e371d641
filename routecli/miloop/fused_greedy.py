"""Greedy TSP decoding with candidate sets for large instances: torch matrix products, numba
elementwise kernels, one set of buffers per decode.

:meth:`routecli.miloop.model.MiLoop.step` runs about 150 tensor operations per construction
step; on one core at K = 200 their dispatch and the elementwise passes between the matrix
products cost as much as the products themselves. This module runs the same arithmetic for the
TSP (MiLoop Section 3, the equations cited below) as 15 numba kernels and 14 torch matrix
products per step over float32 buffers allocated once per decode (numba writes the NumPy arrays,
torch multiplies zero-copy views of them). Weights are extracted from the torch model once
(:class:`FusedWeights`, float32, transposed for ``x @ W``), the memory is a float32 ``[N+1, D]``
array written in place, and the K nearest unvisited nodes come from the exact grid search of
:mod:`routecli.kernels.candidates` (no static neighbour lists: memory stays ``O(N D)``).

The step is its matrix products: torch's (MKL / oneDNN) run 2-3x faster than the BLAS numba
reaches through SciPy, and with ``precision="bf16"`` (:func:`matmul_precision`) oneDNN
multiplies the same float32 buffers in bfloat16 with float32 accumulation, 2-3x faster again
on a CPU with AVX-512 BF16 or AMX. The vector-matrix products (role rows, context) are numba
loops: torch's call costs more than their arithmetic.

Differences from the torch step are float rounding only: padding rows are not computed (they
never reach a valid row), sums run in another order and the embedding's share of the fusion
product is folded into three vectors, so in float32 the logits agree to about 1e-5 and greedy
tours agree until a near-tie (see ``tests/miloop/test_fused_greedy.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numba as nb
import numpy as np
import torch
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic

from routecli.kernels.candidates import NodeGrid, grid_nearest
from routecli.miloop.model import MiLoop
from routecli.nn.fused import DEN_FLOOR, EXP_FLOOR

MIN_DENOMINATOR = np.float32(DEN_FLOOR)
LOG_100 = math.log(100.0)


class FusedWeights(NamedTuple):
    """A TSP MiLoop's weights as float32 arrays, matrices ``[in, out]`` (``x @ W``); the
    attention layers are stacked on a leading axis ``[L, ...]``."""

    embed: np.ndarray  # [2, D]
    embed_bias: np.ndarray  # [D]
    role_first: np.ndarray  # [D, D]
    role_last: np.ndarray  # [D, D]
    fuse_first: np.ndarray  # [2D, D] (Eq. 4)
    fuse_last: np.ndarray
    fuse_cand: np.ndarray
    qkv: np.ndarray  # [L, D, 3D]
    alpha: np.ndarray  # [L] (Eq. 29)
    gain_attn: np.ndarray  # [L, D]
    ff1: np.ndarray  # [L, D, FF]
    ff1_bias: np.ndarray  # [L, FF]
    ff2: np.ndarray  # [L, FF, D]
    ff2_bias: np.ndarray  # [L, D]
    gain_ff: np.ndarray  # [L, D]
    gate_first: np.ndarray  # [2D, D] (Eq. 6)
    gate_last: np.ndarray
    gate_cand: np.ndarray
    gate_first_bias: np.ndarray  # [D]
    gate_last_bias: np.ndarray
    gate_cand_bias: np.ndarray
    context: np.ndarray  # [2D, D] (Eq. 8)
    context_bias: np.ndarray  # [D]
    eps: float  # RMSNorm epsilon
    clip: float  # logit clipping zeta


def supports(model: MiLoop) -> bool:
    """Whether :func:`greedy_tour` computes ``model``'s step: the full TSP architecture
    (memory, fusion and gates on; the ablations run through torch only)."""
    cfg = model.config
    return cfg.problem == "tsp" and cfg.memory and cfg.fusion and cfg.gated


def fused_weights(model: MiLoop) -> FusedWeights:
    """Extract ``model``'s weights (a TSP policy for which :func:`supports` holds)."""
    if not supports(model):
        raise ValueError("the fused greedy step computes the full TSP MiLoop only")

    def mat(linear) -> np.ndarray:
        return np.ascontiguousarray(linear.weight.detach().float().cpu().numpy().T)

    def vec(tensor) -> np.ndarray:
        return np.ascontiguousarray(tensor.detach().float().cpu().numpy().reshape(-1))

    blocks: list[Any] = list(model.blocks)  # AAFMBlock; nn.ModuleList items are untyped
    return FusedWeights(
        embed=mat(model.embed), embed_bias=vec(model.embed.bias),
        role_first=mat(model.role_first), role_last=mat(model.role_last),
        fuse_first=mat(model.fuse_first), fuse_last=mat(model.fuse_last),
        fuse_cand=mat(model.fuse_cand),
        qkv=np.stack([np.concatenate([mat(b.w_q), mat(b.w_k), mat(b.w_v)], 1) for b in blocks]),
        alpha=np.array([float(b.alpha.detach()) for b in blocks], np.float32),
        gain_attn=np.stack([vec(b.norm_attn.weight) for b in blocks]),
        ff1=np.stack([mat(b.ff[0]) for b in blocks]),
        ff1_bias=np.stack([vec(b.ff[0].bias) for b in blocks]),
        ff2=np.stack([mat(b.ff[2]) for b in blocks]),
        ff2_bias=np.stack([vec(b.ff[2].bias) for b in blocks]),
        gain_ff=np.stack([vec(b.norm_ff.weight) for b in blocks]),
        gate_first=mat(model.gate_first), gate_last=mat(model.gate_last),
        gate_cand=mat(model.gate_cand), gate_first_bias=vec(model.gate_first.bias),
        gate_last_bias=vec(model.gate_last.bias), gate_cand_bias=vec(model.gate_cand.bias),
        context=mat(model.context), context_bias=vec(model.context.bias),
        eps=float(blocks[0].norm_attn.eps), clip=float(model.config.clip))


@contextmanager
def matmul_precision(bf16: bool) -> Iterator[None]:
    """Torch's float32 CPU matrix products within the block: in bfloat16 with float32
    accumulation (oneDNN's bf16 math mode; a CPU without native bfloat16 keeps float32), or
    exactly float32 whatever the process set."""
    saved = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium" if bf16 else "highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(saved)


# exp(x) = 2^n * 2^f with n = round(x log2 e), |f| <= 1/2: 2^n built from its exponent bits and
# 2^f from its Taylor polynomial (relative error ~5e-9, below float32's), so that loops over exp
# vectorise; libm's exp is a scalar call, and a table lookup for 2^n a gather, twice as slow.
LOG2E = np.float32(1.0 / math.log(2.0))
LN2 = np.float32(math.log(2.0))
T0, T1, T2, T3, T4, T5, T6, T7 = (np.float32(1.0 / math.factorial(i)) for i in range(8))
FLOOR = np.float32(-EXP_FLOOR)
FAST = {"nsz", "arcp", "contract", "afn", "reassoc"}  # no nnan/ninf: -inf stays meaningful
# the kernels' error_model is numpy: Python's checks every float division for zero, which stops
# the loops from vectorising (x / 0 cannot happen here: denominators are floored)
ZERO = np.float32(0.0)
ONE = np.float32(1.0)


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose bit pattern is the int32 ``bits``."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


@nb.njit(cache=True, inline="always", fastmath=FAST, error_model="numpy")
def _exp(x):
    """``exp(x)`` in float32 for ``x`` in ``[-EXP_FLOOR, 0]``."""
    t = x * LOG2E
    n = np.floor(t + np.float32(0.5))
    r = (t - n) * LN2  # |r| <= ln 2 / 2
    poly = ((((((T7 * r + T6) * r + T5) * r + T4) * r + T3) * r + T2) * r + T1) * r + T0
    return poly * _float32_from_bits((np.int32(n) + np.int32(127)) << np.int32(23))


@nb.njit(cache=True, inline="always", fastmath=FAST, error_model="numpy")
def _sigmoid(x):
    e = _exp(max(-abs(x), FLOOR))
    return ONE / (ONE + e) if x >= 0 else e / (ONE + e)


@nb.njit(cache=True, fastmath=FAST, error_model="numpy")
def _vec_mat(x, w, out):
    """``out = x @ w`` for a vector ``x`` ``[In]`` and ``w`` ``[In, Out]``."""
    out[:] = ZERO
    for r in range(w.shape[0]):
        a, w_r = x[r], w[r]
        for c in range(out.shape[0]):
            out[c] += a * w_r[c]


@nb.njit(cache=True, fastmath=FAST, error_model="numpy")
def _rms_norm(s, gain, eps):
    """``s = s / rms(s) * gain`` in place for a row ``s`` ``[D]`` (Eq. 1)."""
    d = s.shape[0]
    total = ZERO
    for c in range(d):
        total += s[c] * s[c]
    inv = ONE / np.sqrt(total / np.float32(d) + np.float32(eps))
    for c in range(d):
        s[c] = s[c] * inv * gain[c]


# The kernels of one step, in the order the step runs them. Buffers are bound to the step's R
# rows (the first, the current node, the candidates) by the caller. Inner loops index 1-D row
# views from 0: an index like ``d + c`` could be negative as far as numba knows, and its
# wraparound check stops the loop from vectorising.

@nb.njit(cache=True, fastmath=FAST, error_model="numpy")
def _subproblem(nodes, xy, memory, first_call, embed, embed_bias, role_first, role_last,
                coords, fuse_in, h, unit_bias, bias_max, bias_min):
    """Sections 3.1 and Eq. 4-5, 29 up to the first matrix product: the subproblem's coordinates
    ``coords`` ``[2, R]`` (x row, y row) scaled to the unit square, ``fuse_in`` ``[R, 2D]`` =
    [recalled memory || embedding] (the first call recalls the embedding itself, and ``h`` is
    the embedding), and the scale-distance bias ``-gamma log2|A_t| ||x_i - x_j||`` ``[R, R]``
    with each row's largest and smallest entry off the diagonal."""
    rows = nodes.shape[0]
    d = memory.shape[1]
    xs, ys = coords[0], coords[1]
    for i in range(rows):
        xs[i] = xy[nodes[i], 0]
        ys[i] = xy[nodes[i], 1]
    lo0, lo1 = xs.min(), ys.min()
    side = max(max(xs.max() - lo0, ys.max() - lo1), np.float32(1e-9))
    for i in range(rows):
        xs[i] = (xs[i] - lo0) / side
        ys[i] = (ys[i] - lo1) / side
    for i in range(rows):  # h0 = x W_init + b, rows 0 and 1 before their role projection
        x, y, h_i, h0_i = xs[i], ys[i], h[i], fuse_in[i, d:]
        for c in range(d):
            h_i[c] = x * embed[0, c] + y * embed[1, c] + embed_bias[c]
            h0_i[c] = h_i[c]
    _vec_mat(h[0], role_first, fuse_in[0, d:])
    _vec_mat(h[1], role_last, fuse_in[1, d:])
    for i in range(rows):
        recall, out = fuse_in[i, d:] if first_call else memory[nodes[i]], fuse_in[i, :d]
        for c in range(d):
            out[c] = recall[c]
    if first_call:
        h[0] = fuse_in[0, d:]
        h[1] = fuse_in[1, d:]
    count = np.float32(max(rows - 2, 1))
    gamma = max(np.float32(math.log(count)) / np.float32(LOG_100), ONE)
    scale = np.float32(math.log2(count)) * gamma
    # the bias is symmetric, so each row's extremes are its column's, updated row by row
    # (elementwise, which vectorises; a reduction along the row does not)
    bias_min[:] = ZERO  # every entry is <= 0 = the diagonal's, so this may include it
    bias_max[:] = -np.inf  # off the diagonal
    for i in range(rows):
        x, y, b_i = xs[i], ys[i], unit_bias[i]
        for j in range(rows):
            dx, dy = x - xs[j], y - ys[j]
            b_i[j] = -scale * np.sqrt(dx * dx + dy * dy)
            bias_min[j] = min(bias_min[j], b_i[j])
        for j in range(i):
            bias_max[j] = max(bias_max[j], b_i[j])
        after, b_after = bias_max[i + 1:], b_i[i + 1:]
        for j in range(after.shape[0]):
            after[j] = max(after[j], b_after[j])


@nb.njit(cache=True, fastmath=FAST, error_model="numpy")
def _fuse_rows(coords, fuse_in, fuse_first, fuse_last, fuse_coords, h):
    """Completes ``h`` = [recalled || h0] W_fuse (Eq. 4) after ``h = recalled @ W_fuse[:D]``:
    a candidate's h0 is affine in its coordinates, so its share is ``x u + y v + w`` with
    ``fuse_coords`` = [u, v, w] ``[3, D]``; rows 0 and 1 go through their role matrices."""
    u, v, w = fuse_coords[0], fuse_coords[1], fuse_coords[2]
    for i in range(2, h.shape[0]):
        x, y, h_i = coords[0, i], coords[1, i], h[i]
        for c in range(h_i.shape[0]):
            h_i[c] += x * u[c] + y * v[c] + w[c]
    _vec_mat(fuse_in[0], fuse_first, h[0])
    _vec_mat(fuse_in[1], fuse_last, h[1])


@nb.njit(cache=True, fastmath=FAST, error_model="numpy")
def _attention_inputs(qkv, unit_bias, bias_max, bias_min, alpha, pair, packed, k_max):
    """The AAFM factors (Eq. 28-29) for ``both = pair @ packed``: ``pair`` ``[R, R]`` =
    exp(alpha B - row max) with zero self-pairs, ``packed`` ``[R, 2D]`` =
    [exp(K - max K) * V || exp(K - max K)]."""
    rows = pair.shape[0]
    d = k_max.shape[0]
    for i in range(rows):
        row_max = alpha * (bias_max[i] if alpha >= 0 else bias_min[i])  # over j != i
        b_i, p_i = unit_bias[i], pair[i]
        for j in range(rows):
            p_i[j] = _exp(max(alpha * b_i[j] - row_max, FLOOR))
        p_i[i] = ZERO
    k_max[:] = qkv[0, d:2 * d]
    for j in range(1, rows):
        k_j = qkv[j, d:2 * d]
        for c in range(d):
            k_max[c] = max(k_max[c], k_j[c])
    for j in range(rows):
        k_j, v_j, num_j, den_j = qkv[j, d:2 * d], qkv[j, 2 * d:], packed[j, :d], packed[j, d:]
        for c in range(d):
            e = _exp(min(max(k_j[c] - k_max[c], FLOOR), ZERO))
            num_j[c] = e * v_j[c]
            den_j[c] = e


@nb.njit(cache=True, fastmath=FAST, error_model="numpy")
def _attend(qkv, both, h, gain, eps, mid):
    """``mid = RMSNorm(sigmoid(Q) * num / den + h)`` (Eq. 27, 1) from ``both`` = [num || den]."""
    rows, d = h.shape
    for i in range(rows):
        q_i, num_i, den_i, h_i, mid_i = qkv[i, :d], both[i, :d], both[i, d:], h[i], mid[i]
        for c in range(d):
            mid_i[c] = _sigmoid(q_i[c]) * num_i[c] / max(den_i[c], MIN_DENOMINATOR) + h_i[c]
        _rms_norm(mid_i, gain, eps)


@nb.njit(cache=True, fastmath=FAST, error_model="numpy")
def _relu_bias(hidden, bias):
    """``hidden = max(hidden + b, 0)``: the feed-forward's hidden layer."""
    for i in range(hidden.shape[0]):
        hidden_i = hidden[i]
        for c in range(hidden_i.shape[0]):
            hidden_i[c] = max(hidden_i[c] + bias[c], ZERO)


@nb.njit(cache=True, fastmath=FAST, error_model="numpy")
def _ff_out(ff, bias, mid, gain, eps, out, offset):
    """``out[:, offset:offset + D] = RMSNorm(ff + b + mid)``: the block's output (Eq. 1)."""
    d = ff.shape[1]
    for i in range(ff.shape[0]):
        ff_i, mid_i, out_i = ff[i], mid[i], out[i, offset:offset + d]
        for c in range(d):
            out_i[c] = ff_i[c] + bias[c] + mid_i[c]
        _rms_norm(out_i, gain, eps)


@nb.njit(cache=True, fastmath=FAST, error_model="numpy")
def _update(nodes, fuse_in, gate, gate_first, gate_last, gate_first_bias, gate_last_bias,
            gate_cand_bias, context, context_bias, clip, memory, updated, query, log_p):
    """Eq. 6-8 after ``gate = [recalled || H] @ W_gate[cand]``: the gated memory update
    M' = lerp(M, H, G), written back by node id (a first row that is also the current node
    loses to the later row, Appendix B.1.2), then the candidates' log-probabilities ``[R-2]``
    from the compatibility scores (the torch step's ``log_softmax(logits)``)."""
    rows, d = updated.shape
    _vec_mat(fuse_in[0], gate_first, gate[0])
    _vec_mat(fuse_in[1], gate_last, gate[1])
    for i in range(rows):
        bias = gate_first_bias if i == 0 else gate_last_bias if i == 1 else gate_cand_bias
        gate_i, start_i, end_i, out_i = gate[i], fuse_in[i, :d], fuse_in[i, d:], updated[i]
        for c in range(d):
            g = _sigmoid(gate_i[c] + bias[c])
            start, end = start_i[c], end_i[c]
            out_i[c] = start + g * (end - start) if g < 0.5 else end - (end - start) * (1 - g)
    for i in range(rows):
        if i > 0 or nodes[0] != nodes[1]:
            memory[nodes[i]] = updated[i]
    _vec_mat(updated[:2].reshape(2 * d), context, query)  # [m_first || m_last] W_ctx + b
    for c in range(d):
        query[c] += context_bias[c]
    for i in range(2, rows):
        score, m_i = ZERO, updated[i]
        for c in range(d):
            score += m_i[c] * query[c]
        log_p[i - 2] = clip * math.tanh(score / math.sqrt(d))
    top = log_p.max()
    total = ZERO
    for i in range(rows - 2):
        log_p[i] -= top
        total += _exp(max(log_p[i], FLOOR))
    log = np.float32(math.log(total))
    for i in range(rows - 2):
        log_p[i] -= log


@nb.njit(cache=True)
def _candidates(xy64, current, first, visited, no_demand, k, grid_start, grid_nodes, cell, x0, y0,
                nx, ny, dist, idx, nodes):
    """``nodes`` = [first, current, the ``k`` nearest unvisited nodes of ``current`` in
    ascending id order (the torch path's row order)]; returns R."""
    found = grid_nearest(xy64, current, visited, no_demand, 0.0, -1, k, grid_start, grid_nodes,
                         cell, x0, y0, nx, ny, dist, idx)
    nodes[0] = first
    nodes[1] = current
    nodes[2:found + 2] = np.sort(idx[:found])
    return found + 2


class _Rows(NamedTuple):
    """Every buffer of a step over R rows: NumPy arrays for numba, torch views of the same
    memory for the matrix products (``*_t``)."""

    nodes: np.ndarray  # [R] int64: first, current, candidates
    coords: np.ndarray  # [2, R]: x row, y row
    unit_bias: np.ndarray  # [R, R]
    bias_max: np.ndarray  # [R]
    bias_min: np.ndarray  # [R]
    fuse_in: np.ndarray  # [R, 2D]: [recalled || h0], then [recalled || H] for the gates
    h: np.ndarray  # [R, D]
    qkv: np.ndarray  # [R, 3D]
    pair: np.ndarray  # [R, R]
    packed: np.ndarray  # [R, 2D]
    both: np.ndarray  # [R, 2D]
    mid: np.ndarray  # [R, D]
    hidden: np.ndarray  # [R, FF]
    ff: np.ndarray  # [R, D]
    gate: np.ndarray  # [R, D]
    updated: np.ndarray  # [R, D]
    log_p: np.ndarray
    recalled_t: torch.Tensor  # fuse_in[:, :D]
    fuse_in_t: torch.Tensor
    h_t: torch.Tensor
    qkv_t: torch.Tensor
    pair_t: torch.Tensor
    packed_t: torch.Tensor
    both_t: torch.Tensor
    mid_t: torch.Tensor
    hidden_t: torch.Tensor
    ff_t: torch.Tensor
    gate_t: torch.Tensor


class GreedyStep:
    """One decode's MiLoop steps over at most ``k + 2`` rows of the TSP with coordinates ``xy``
    ``[N, 2]`` (float32): the weights, the memory ``[N+1, D]`` and every buffer of a step,
    allocated here once. Write the step's node ids to ``nodes[:R]``, then call the step within
    ``torch.inference_mode()`` (where its tensors are made) and :func:`matmul_precision`."""

    def __init__(self, model: MiLoop, xy: np.ndarray, k: int):
        self.w = w = fused_weights(model)
        self.xy = np.ascontiguousarray(xy, np.float32)
        d, ff, most = w.role_first.shape[0], w.ff1.shape[2], k + 2
        self.memory = np.zeros((len(self.xy) + 1, d), np.float32)  # one row per node + spare
        self.nodes = np.empty(most, np.int64)
        # [R, width] buffers (None: R wide) and the coordinates [2, R], each flat so that its
        # first R rows are one contiguous block
        self.widths = {"unit_bias": None, "fuse_in": 2 * d, "h": d, "qkv": 3 * d, "pair": None,
                       "packed": 2 * d, "both": 2 * d, "mid": d, "hidden": ff, "ff": d,
                       "gate": d, "updated": d}
        self.flat = {name: np.empty(most * (width or most), np.float32)
                     for name, width in self.widths.items()}
        self.flat_coords = np.empty(2 * most, np.float32)
        self.vectors = np.empty((3, most), np.float32)  # row extremes of the bias, log-probs
        self.k_max, self.query = np.empty(d, np.float32), np.empty(d, np.float32)
        # the candidates' share of the fusion product (see _fuse_rows)
        self.fuse_coords = np.ascontiguousarray(np.concatenate(
            [w.embed, w.embed_bias[None]]) @ w.fuse_cand[d:])  # [3, D]
        with torch.inference_mode():
            self.fuse_recall = torch.from_numpy(np.ascontiguousarray(w.fuse_cand[:d]))  # [D, D]
            self.gate_cand = torch.from_numpy(w.gate_cand)
            # per layer: W_qkv, alpha, g_attn, W_ff1, b_ff1, W_ff2, b_ff2, g_ff
            self.layers = [(torch.from_numpy(w.qkv[i]), w.alpha[i], w.gain_attn[i],
                            torch.from_numpy(w.ff1[i]), w.ff1_bias[i],
                            torch.from_numpy(w.ff2[i]), w.ff2_bias[i], w.gain_ff[i])
                           for i in range(len(w.qkv))]
            self.rows = self._bind(most)

    def _bind(self, rows: int) -> _Rows:
        """The buffers' first ``rows`` rows (a new set only for the last K steps of a tour)."""
        arrays = {name: self.flat[name][:rows * (width or rows)].reshape(rows, width or rows)
                  for name, width in self.widths.items()}
        fields: dict[str, Any] = {
            **arrays, **{f"{name}_t": torch.from_numpy(arrays[name]) for name in (
                "fuse_in", "h", "qkv", "pair", "packed", "both", "mid", "hidden", "ff", "gate")}}
        return _Rows(nodes=self.nodes[:rows], coords=self.flat_coords[:2 * rows].reshape(2, rows),
                     bias_max=self.vectors[0, :rows], bias_min=self.vectors[1, :rows],
                     log_p=self.vectors[2, :rows - 2],
                     recalled_t=fields["fuse_in_t"][:, :self.widths["h"]], **fields)

    def __call__(self, rows: int, first_call: bool) -> np.ndarray:
        """The step over ``nodes[:rows]``: updates the memory, returns the candidates'
        log-probabilities ``[rows - 2]`` (a view, valid until the next call)."""
        if rows != len(self.rows.nodes):
            self.rows = self._bind(rows)
        b, w = self.rows, self.w
        # 1-2. subproblem, embedding and memory fusion (Eq. 4)
        _subproblem(b.nodes, self.xy, self.memory, first_call, w.embed, w.embed_bias,
                    w.role_first, w.role_last, b.coords, b.fuse_in, b.h, b.unit_bias,
                    b.bias_max, b.bias_min)
        if not first_call:
            torch.mm(b.recalled_t, self.fuse_recall, out=b.h_t)  # [R, D]
            _fuse_rows(b.coords, b.fuse_in, w.fuse_first, w.fuse_last, self.fuse_coords, b.h)
        # 3. AAFM layers (Eq. 1, 27-29); the last writes H beside the recalled rows for the gates
        last = self.layers[-1]
        for layer in self.layers:
            w_qkv, alpha, gain_attn, w_ff1, bias1, w_ff2, bias2, gain_ff = layer
            torch.mm(b.h_t, w_qkv, out=b.qkv_t)  # [R, 3D]
            _attention_inputs(b.qkv, b.unit_bias, b.bias_max, b.bias_min, alpha, b.pair,
                              b.packed, self.k_max)
            torch.mm(b.pair_t, b.packed_t, out=b.both_t)  # [R, 2D] numerator || denominator
            _attend(b.qkv, b.both, b.h, gain_attn, w.eps, b.mid)
            torch.mm(b.mid_t, w_ff1, out=b.hidden_t)  # [R, FF]
            _relu_bias(b.hidden, bias1)
            torch.mm(b.hidden_t, w_ff2, out=b.ff_t)  # [R, D]
            if layer is last:
                _ff_out(b.ff, bias2, b.mid, gain_ff, w.eps, b.fuse_in, len(self.query))
            else:
                _ff_out(b.ff, bias2, b.mid, gain_ff, w.eps, b.h, 0)
        # 4-5. gated memory update (Eq. 6-7) and log-probabilities (Eq. 8)
        torch.mm(b.fuse_in_t, self.gate_cand, out=b.gate_t)  # [R, D]
        _update(b.nodes, b.fuse_in, b.gate, w.gate_first, w.gate_last, w.gate_first_bias,
                w.gate_last_bias, w.gate_cand_bias, w.context, w.context_bias, w.clip,
                self.memory, b.updated, self.query, b.log_p)
        return b.log_p


def greedy_tour(model: MiLoop, coords: np.ndarray, k: int, start: int = 0,
                progress: Callable[[int], None] | None = None, report_every: int = 256,
                bf16: bool = False, stop: Callable[[], bool] | None = None) -> np.ndarray:
    """Greedy tour ``[N]`` of the TSP with coordinates ``coords`` ``[N, 2]`` (unit square,
    float32 as the torch path feeds them) from ``start``, each step over the ``k`` nearest
    unvisited nodes; ``bf16``: the matrix products in bfloat16 with float32 accumulation.
    ``progress(t)`` is called with the number of nodes placed every ``report_every`` steps;
    ``stop()`` after every step: when it says so, the tour so far is returned (``[t]``)."""
    with torch.inference_mode(), matmul_precision(bf16):
        step = GreedyStep(model, coords, k)
        n = len(step.xy)
        xy64 = step.xy.astype(np.float64)
        grid = NodeGrid(xy64)
        dist, idx = np.empty(k, np.float64), np.empty(k, np.int64)
        visited = np.zeros(n, np.bool_)
        visited[start] = True
        tour = np.empty(n, np.int64)
        tour[0] = start
        no_demand = np.zeros(n)
        for t in range(1, n):
            rows = _candidates(xy64, tour[t - 1], start, visited, no_demand, k, grid.start,
                               grid.nodes, grid.cell, grid.x0, grid.y0, grid.nx, grid.ny, dist,
                               idx, step.nodes)
            log_p = step(rows, t == 1)
            choice = step.nodes[2 + log_p.argmax()]
            visited[choice] = True
            tour[t] = choice
            if progress is not None and (t % report_every == 0 or t == n - 1):
                progress(t + 1)
            if stop is not None and t < n - 1 and stop():
                return tour[:t + 1]
    return tour
