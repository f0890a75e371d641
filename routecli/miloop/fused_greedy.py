"""Greedy TSP decoding with candidate sets as one compiled loop (numba), for large instances.

:meth:`routecli.miloop.model.MiLoop.step` runs about 150 tensor operations per construction
step; on one core at K = 200 their dispatch and the elementwise passes between the matrix
products cost as much as the products themselves. This module runs the same arithmetic for the
TSP (MiLoop Section 3, the equations cited below) as one numba loop: weights are extracted from
the torch model once (:class:`FusedWeights`, float32, transposed for ``x @ W``), the memory is a
float32 ``[N+1, D]`` array written in place, and the K nearest unvisited nodes come from the
exact grid search of :mod:`routecli.kernels.candidates` (no static neighbour lists: memory
stays ``O(N D)``). Matrix products go to BLAS through ``np.dot``.

Differences from the torch step are float rounding only: padding rows are not computed (they
never reach a valid row) and sums run in another order, so the logits agree to about 1e-5 and
greedy tours agree until a near-tie (see ``tests/miloop/test_fused_greedy.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numba as nb
import numpy as np

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


# exp(x) = 2^n * 2^f with n = round(x log2 e), |f| <= 1/2: 2^n from a table and 2^f from its
# Taylor polynomial (relative error ~5e-9, below float32's), so that loops over exp vectorise;
# libm's exp is a scalar call that took a third of a step.
LOG2E = np.float32(1.0 / math.log(2.0))
LN2 = np.float32(math.log(2.0))
POW2_NEG = np.array([2.0 ** -i for i in range(128)], np.float32)  # 2^-i
TAYLOR = np.array([1.0 / math.factorial(i) for i in range(8)], np.float32)
FLOOR = np.float32(-EXP_FLOOR)
FAST = {"nsz", "arcp", "contract", "afn", "reassoc"}  # no nnan/ninf: -inf stays meaningful


@nb.njit(cache=True, inline="always", fastmath=FAST)
def _exp(x):
    """``exp(x)`` in float32 for ``x`` in ``[-EXP_FLOOR, 0]``."""
    t = x * LOG2E
    n = np.floor(t + np.float32(0.5))
    r = (t - n) * LN2  # |r| <= ln 2 / 2
    poly = TAYLOR[7]
    for i in range(6, -1, -1):
        poly = poly * r + TAYLOR[i]
    return poly * POW2_NEG[int(-n)]


@nb.njit(cache=True, inline="always", fastmath=FAST)
def _sigmoid(x):
    e = _exp(max(-abs(x), FLOOR))
    return np.float32(1.0) / (np.float32(1.0) + e) if x >= 0 else e / (np.float32(1.0) + e)


@nb.njit(cache=True)
def _role_rows(x, first, last, rest, out):
    """``out = x @ rest``, rows 0 and 1 through ``first`` and ``last`` (Eq. 4, 6)."""
    out[:] = np.dot(x, rest)
    out[0] = np.dot(x[0], first)
    out[1] = np.dot(x[1], last)


@nb.njit(cache=True, fastmath=FAST)
def _rms_norm(s, gain, eps, out):
    """``out = s / rms(s) * gain`` row by row (RMSNorm of a residual sum, Eq. 1)."""
    rows, d = s.shape
    for i in range(rows):
        total = np.float32(0.0)
        for c in range(d):
            total += s[i, c] * s[i, c]
        inv = np.float32(1.0) / np.sqrt(total / np.float32(d) + np.float32(eps))
        for c in range(d):
            out[i, c] = s[i, c] * inv * gain[c]


@nb.njit(cache=True, fastmath=FAST)
def _block(h, unit_bias, w, layer):
    """One AAFM block (Eq. 1, 27-29) on ``h`` ``[R, D]``: every pair is admissible except
    self-pairs (padding rows are not computed)."""
    rows, d = h.shape
    qkv = np.dot(h, w.qkv[layer])  # [R, 3D]
    alpha = w.alpha[layer]
    pair = np.empty((rows, rows), np.float32)  # exp(alpha B - row max), Eq. 28-29
    for i in range(rows):
        row_max = unit_bias[i, 1 - min(i, 1)] * alpha  # an admissible (j != i) entry
        for j in range(rows):
            pair[i, j] = unit_bias[i, j] * alpha
            if j != i:
                row_max = max(row_max, pair[i, j])
        for j in range(rows):
            pair[i, j] = _exp(max(pair[i, j] - row_max, FLOOR))
        pair[i, i] = 0.0
    k_max = qkv[0, d:2 * d].copy()
    for j in range(1, rows):
        for c in range(d):
            k_max[c] = max(k_max[c], qkv[j, d + c])
    packed = np.empty((rows, 2 * d), np.float32)  # [exp(K - max K) * V || exp(K - max K)]
    for j in range(rows):
        for c in range(d):
            e = _exp(min(max(qkv[j, d + c] - k_max[c], FLOOR), np.float32(0.0)))
            packed[j, c] = e * qkv[j, 2 * d + c]
            packed[j, d + c] = e
    both = np.dot(pair, packed)  # [R, 2D] numerator || denominator
    s = np.empty((rows, d), np.float32)
    for i in range(rows):
        for c in range(d):
            attn = _sigmoid(qkv[i, c]) * both[i, c] / max(both[i, d + c], MIN_DENOMINATOR)
            s[i, c] = attn + h[i, c]
    mid = np.empty((rows, d), np.float32)
    _rms_norm(s, w.gain_attn[layer], w.eps, mid)
    hidden = np.dot(mid, w.ff1[layer])  # [R, FF]
    bias1 = w.ff1_bias[layer]
    for i in range(rows):
        for c in range(hidden.shape[1]):
            hidden[i, c] = max(hidden[i, c] + bias1[c], np.float32(0.0))
    ff = np.dot(hidden, w.ff2[layer])  # [R, D]
    bias2 = w.ff2_bias[layer]
    for i in range(rows):
        for c in range(d):
            s[i, c] = ff[i, c] + bias2[c] + mid[i, c]
    out = np.empty((rows, d), np.float32)
    _rms_norm(s, w.gain_ff[layer], w.eps, out)
    return out


@nb.njit(cache=True, fastmath=FAST)
def step_logits(w, memory, xy, nodes, first_call):
    """One decoding step over ``nodes`` ``[R]`` = [first, current, candidates...] with
    coordinates ``xy`` ``[N, 2]`` float32: writes the updated rows to ``memory`` ``[N+1, D]``
    and returns the candidates' log-probabilities ``[R-2]`` (the torch step's
    ``log_softmax(logits)``)."""
    rows = nodes.shape[0]
    d = memory.shape[1]
    # 1. normalised coordinates of the subproblem (Section 3.1) and their embedding
    coords = np.empty((rows, 2), np.float32)
    for i in range(rows):
        coords[i, 0] = xy[nodes[i], 0]
        coords[i, 1] = xy[nodes[i], 1]
    lo0, lo1 = coords[:, 0].min(), coords[:, 1].min()
    side = max(max(coords[:, 0].max() - lo0, coords[:, 1].max() - lo1), np.float32(1e-9))
    for i in range(rows):
        coords[i, 0] = (coords[i, 0] - lo0) / side
        coords[i, 1] = (coords[i, 1] - lo1) / side
    h0 = np.empty((rows, d), np.float32)
    for i in range(rows):
        for c in range(d):
            h0[i, c] = coords[i, 0] * w.embed[0, c] + coords[i, 1] * w.embed[1, c] + w.embed_bias[c]
    first_row, last_row = h0[0].copy(), h0[1].copy()
    h0[0] = np.dot(first_row, w.role_first)
    h0[1] = np.dot(last_row, w.role_last)
    # 2. memory fusion (Eq. 4); the first call gates against the embedding itself
    recalled = h0.copy()
    h = h0.copy()
    pair_in = np.empty((rows, 2 * d), np.float32)
    if not first_call:
        for i in range(rows):
            recalled[i] = memory[nodes[i]]
        pair_in[:, :d] = recalled
        pair_in[:, d:] = h0
        _role_rows(pair_in, w.fuse_first, w.fuse_last, w.fuse_cand, h)
    # 3. attention with the scale-distance bias -gamma log2|A_t| ||x_i - x_j|| (Eq. 29)
    count = np.float32(max(rows - 2, 1))
    gamma = max(np.float32(math.log(count)) / np.float32(LOG_100), np.float32(1.0))
    scale = np.float32(math.log2(count)) * gamma
    unit_bias = np.empty((rows, rows), np.float32)
    for i in range(rows):
        for j in range(rows):
            dx, dy = coords[i, 0] - coords[j, 0], coords[i, 1] - coords[j, 1]
            unit_bias[i, j] = -scale * np.sqrt(dx * dx + dy * dy)
    for layer in range(w.qkv.shape[0]):
        h = _block(h, unit_bias, w, layer)
    # 4. gated memory update M' = lerp(M, H, G) (Eq. 6-7), written back by node id; a first
    # row that is also the current node loses to the later row (Appendix B.1.2)
    pair_in[:, :d] = recalled
    pair_in[:, d:] = h
    gate = np.empty((rows, d), np.float32)
    _role_rows(pair_in, w.gate_first, w.gate_last, w.gate_cand, gate)
    gate[0] += w.gate_first_bias
    gate[1] += w.gate_last_bias
    for i in range(2, rows):
        gate[i] += w.gate_cand_bias
    updated = np.empty((rows, d), np.float32)
    for i in range(rows):
        for c in range(d):
            g = _sigmoid(gate[i, c])
            start, end = recalled[i, c], h[i, c]
            updated[i, c] = start + g * (end - start) if g < 0.5 else end - (end - start) * (1 - g)
    for i in range(rows):
        if i > 0 or nodes[0] != nodes[1]:
            memory[nodes[i]] = updated[i]
    # 5. compatibility scores from the updated rows (Eq. 8) and their log-softmax
    context_in = np.empty(2 * d, np.float32)
    context_in[:d] = updated[0]
    context_in[d:] = updated[1]
    query = np.dot(context_in, w.context) + w.context_bias
    logits = np.empty(rows - 2, np.float32)
    for i in range(2, rows):
        score = np.float32(0.0)
        for c in range(d):
            score += updated[i, c] * query[c]
        logits[i - 2] = w.clip * math.tanh(score / math.sqrt(d))
    shifted = logits - logits.max()
    return shifted - np.float32(math.log(np.exp(shifted).sum()))


@nb.njit(cache=True)
def _decode_steps(w, memory, xy, xy64, grid_start, grid_nodes, cell, x0, y0, nx, ny, no_demand,
                  visited, tour, begin, end, k):
    """Greedy decisions ``begin .. end - 1`` of ``tour`` (``tour[0]`` is the start node)."""
    dist = np.empty(k, np.float64)
    idx = np.empty(k, np.int64)
    for t in range(begin, end):
        current = tour[t - 1]
        found = grid_nearest(xy64, current, visited, no_demand, 0.0, -1, k, grid_start,
                             grid_nodes, cell, x0, y0, nx, ny, dist, idx)
        nodes = np.empty(found + 2, np.int64)
        nodes[0] = tour[0]
        nodes[1] = current
        nodes[2:] = np.sort(idx[:found])  # ascending ids, the torch path's row order
        log_p = step_logits(w, memory, xy, nodes, t == 1)
        choice = nodes[2 + np.argmax(log_p)]
        visited[choice] = True
        tour[t] = choice


def greedy_tour(model: MiLoop, coords: np.ndarray, k: int, start: int = 0,
                progress: Callable[[int], None] | None = None, report_every: int = 256
                ) -> np.ndarray:
    """Greedy tour ``[N]`` of the TSP with coordinates ``coords`` ``[N, 2]`` (unit square,
    float32 as the torch path feeds them) from ``start``, each step over the ``k`` nearest
    unvisited nodes. ``progress(t)`` is called with the number of nodes placed every
    ``report_every`` steps."""
    xy = np.ascontiguousarray(coords, np.float32)
    n = len(xy)
    weights = fused_weights(model)
    xy64 = xy.astype(np.float64)
    grid = NodeGrid(xy64)
    memory = np.zeros((n + 1, model.config.dim), np.float32)  # one row per node + spare
    visited = np.zeros(n, np.bool_)
    visited[start] = True
    tour = np.empty(n, np.int64)
    tour[0] = start
    no_demand = np.zeros(n)
    for begin in range(1, n, report_every):
        end = min(begin + report_every, n)
        _decode_steps(weights, memory, xy, xy64, grid.start, grid.nodes, grid.cell, grid.x0,
                      grid.y0, grid.nx, grid.ny, no_demand, visited, tour, begin, end, k)
        if progress is not None:
            progress(end)
    return tour
