"""The routing-aware encodings of the PE paper (Section 4): IPE, XPE and their concatenation,
plus the ablation variants of Appendix L.

**IPE** (in-route, D1 + D2). Phase ``p_i = 2 pi d_i / d_L`` (cumulative distance over route
length). Direction-aware ``IPE->(v_i) = [sin(w_k p_i), cos(w_k p_i)]_{k<D/2}``; direction-invariant
``IPE<->(v_i) = [cos(w_k p_i)]_{k<D}``. Frequencies are the *integer harmonics* ``w_k = k + 1``:
the paper writes the NLP schedule ``w_k = 10000^(-2k/D)``, but with non-integer ``w_k`` the two
ends of a route (``p = 0`` and ``p = 2 pi``) get different encodings and reversal
(``p -> 2 pi - p``) no longer leaves the cosines unchanged, contradicting the paper's own
Section 4.1 claims; integer ``w_k`` make ``cos(w_k (2 pi - p)) = cos(w_k p)`` and
``sin(w_k (2 pi - p)) = -sin(w_k p)`` exact. ``schedule="geometric"`` keeps the paper's formula for
comparison.

Channel amplitudes: with flat amplitudes, ``||IPE->(u) - IPE->(v)||^2 = sum_k 2 - 2 cos(k delta)``
(``delta = p_u - p_v``) is a Dirichlet kernel: nearly constant once ``delta > 2 pi / K``, so the
encoding forgets how far apart two nodes are. We therefore scale harmonic ``k`` by ``1 / w_k``
(``amplitude="harmonic"``, the default with integer frequencies), the Fourier weights of a smooth
closed curve: then ``||IPE->(u) - IPE->(v)||^2 = sum_k 2 (1 - cos(k delta)) / k^2``, whose
derivative ``sum_k 2 sin(k delta) / k`` is positive on ``(0, pi)`` for every ``K`` (the
Fejer-Jackson inequality): the IPE distance is a strictly increasing function of the cyclic arc
``min(delta, 2 pi - delta)``. ``amplitude="flat"`` gives the paper's unscaled form.

**XPE** (cross-route, D3). ``theta_v = atan2(y_v - y_0, x_v - x_0)``;
``XPE(v) = [sin(2^k theta_v), cos(2^k theta_v)]_{k<K}`` (K = 4), zero-padded to D; the depot has
no angle and gets the zero vector.

**IPE+XPE** (hierarchical): ``[IPE(v) || XPE(v)]``, width ``2 D``.

Ablations: ``ipe_index`` replaces ``d_i / d_L`` by ``i / L`` (Table 10); per-route XPE computes one
angle per route (arithmetic mean, circular mean ``arg sum e^{i theta}``, demand-weighted mean,
median, or the max-min midpoint ``(max + min) / 2``) and broadcasts it to the route (Table 11).
"""

from __future__ import annotations

import math

import torch

from routecli.pe.base import PositionalEncoding, even_dim, geometric_frequencies, masked, pad_to
from routecli.pe.batch import RouteBatch

SCHEDULES = ("integer", "geometric")
AMPLITUDES = ("harmonic", "flat")
XPE_AGGREGATES = ("node", "mean", "circular", "demand", "median", "midpoint")


def ipe_frequencies(count: int, dim: int, schedule: str) -> torch.Tensor:
    """``count`` IPE frequencies: integer harmonics ``1..count`` or the paper's geometric ones."""
    if schedule == "integer":
        return torch.arange(1, count + 1, dtype=torch.float32)
    if schedule == "geometric":
        return geometric_frequencies(count, dim)
    raise ValueError(f"unknown IPE frequency schedule {schedule!r}; expected one of {SCHEDULES}")


def ipe_amplitudes(freqs: torch.Tensor, amplitude: str) -> torch.Tensor:
    """Per-frequency channel scale: ``1`` (``flat``) or ``1 / w_k`` (``harmonic``, integer
    frequencies only)."""
    if amplitude == "flat":
        return torch.ones_like(freqs)
    if amplitude == "harmonic":
        if (freqs < 1).any():
            raise ValueError("harmonic IPE amplitudes need integer frequencies (schedule='integer')")
        return 1.0 / freqs
    raise ValueError(f"unknown IPE amplitude {amplitude!r}; expected one of {AMPLITUDES}")


def in_route_phase(batch: RouteBatch, index_based: bool = False) -> torch.Tensor:
    """``2 pi d_i / d_L`` (or ``2 pi i / L`` when ``index_based``), 0 at the depot. ``[B, S]``."""
    if index_based:
        return 2 * math.pi * batch.pos.float() / batch.length.clamp_min(1).float()
    return 2 * math.pi * batch.cum / batch.total.clamp_min(1e-12)


class InRoutePE(PositionalEncoding):
    """IPE: distance-indexed circular sinusoid (see module docstring). ``[B, S, D]``."""

    kind = "node"
    freqs: torch.Tensor  # buffer
    scale: torch.Tensor  # buffer

    def __init__(self, dim: int, num_heads: int = 1, direction_aware: bool = True,
                 schedule: str = "integer", index_based: bool = False,
                 amplitude: str | None = None):
        super().__init__(even_dim("ipe", dim) if direction_aware else dim, num_heads)
        self.direction_aware = direction_aware
        self.index_based = index_based
        count = dim // 2 if direction_aware else dim
        freqs = ipe_frequencies(count, dim, schedule)
        self.register_buffer("freqs", freqs, persistent=False)
        if amplitude is None:
            amplitude = "harmonic" if schedule == "integer" else "flat"
        self.register_buffer("scale", ipe_amplitudes(freqs, amplitude), persistent=False)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        angle = in_route_phase(batch, self.index_based)[..., None] * self.freqs  # [B, S, K]
        if self.direction_aware:
            out = torch.stack([angle.sin(), angle.cos()], dim=-1) * self.scale[:, None]
            out = out.flatten(-2)
        else:
            out = angle.cos() * self.scale
        return masked(out, batch)


def route_angles(batch: RouteBatch, how: str) -> torch.Tensor:
    """One depot-relative angle per route, broadcast back to its slots. ``[B, S]``.

    ``how``: ``mean`` (arithmetic), ``circular`` (``arg sum_v e^{i theta_v}``), ``demand``
    (demand-weighted arithmetic mean), ``median`` (of the angles, the mean of the two middle
    ones for an even count), ``midpoint`` (``(max + min) / 2``). Depot slots get 0.
    """
    customer = batch.is_customer
    routes = int(batch.route.max()) + 1
    num = batch.batch_size
    theta = torch.where(customer, batch.theta, torch.zeros_like(batch.theta))
    weight = customer.float() * (batch.demand if how == "demand" else 1.0)
    index = torch.where(customer, batch.route, torch.zeros_like(batch.route))

    def per_route(values: torch.Tensor, reduce: str = "sum") -> torch.Tensor:
        out = values.new_zeros(num, routes)
        return out.scatter_reduce(1, index, values, reduce=reduce, include_self=False)

    if how in ("mean", "demand"):
        angle = per_route(theta * weight) / per_route(weight).clamp_min(1e-12)
    elif how == "circular":
        angle = torch.atan2(per_route(theta.sin() * weight), per_route(theta.cos() * weight))
    elif how == "midpoint":
        lo = per_route(torch.where(customer, theta, torch.full_like(theta, math.inf)), "amin")
        hi = per_route(torch.where(customer, theta, torch.full_like(theta, -math.inf)), "amax")
        angle = (lo + hi) / 2
    elif how == "median":
        # Sort slots by (route, angle); each route is then a contiguous run, and its median
        # sits in the middle of the run.
        key = torch.where(customer, index.double() * 8 + theta.double() + math.pi, math.inf)
        order = key.argsort(dim=1)
        sorted_theta = theta.gather(1, order)
        count = per_route(customer.float()).long()  # [B, R]
        start = torch.cumsum(count, 1) - count  # route 0 (the depot) holds no customer
        lower = (start + (count - 1).clamp_min(0) // 2).clamp(0, batch.num_slots - 1)
        upper = (start + count // 2).clamp(0, batch.num_slots - 1)
        angle = (sorted_theta.gather(1, lower) + sorted_theta.gather(1, upper)) / 2
    else:
        raise ValueError(f"unknown XPE aggregate {how!r}; expected one of {XPE_AGGREGATES}")
    return torch.where(customer, angle.gather(1, index), torch.zeros_like(theta))


class CrossRoutePE(PositionalEncoding):
    """XPE: multi-frequency sinusoid of the depot-relative angle, ``w'_k = 2^k`` for ``k < K``,
    zero-padded to ``D`` (``2K <= D``); per node, or one angle per route (``aggregate``).
    ``[B, S, D]``, zero at the depot."""

    kind = "node"
    freqs: torch.Tensor  # buffer

    def __init__(self, dim: int, num_heads: int = 1, k: int = 4, aggregate: str = "node"):
        super().__init__(dim, num_heads)
        if 2 * k > dim:
            raise ValueError(f"XPE needs 2K <= D, got K={k}, D={dim}")
        if aggregate not in XPE_AGGREGATES:
            raise ValueError(f"unknown XPE aggregate {aggregate!r}; expected {XPE_AGGREGATES}")
        self.aggregate = aggregate
        self.register_buffer("freqs", 2.0 ** torch.arange(k, dtype=torch.float32),
                             persistent=False)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        theta = batch.theta if self.aggregate == "node" else route_angles(batch, self.aggregate)
        angle = theta[..., None] * self.freqs  # [B, S, K]
        out = torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(-2)
        customer = batch.mask & (batch.node != 0)
        return pad_to(out, self.out_dim) * customer[..., None]


class HierarchicalPE(PositionalEncoding):
    """IPE+XPE: ``[IPE(v) || XPE(v)]``, each of width ``dim``. ``[B, S, 2 D]``.
    ``xpe_aggregate`` other than ``node`` gives Table 11's per-route XPE beside IPE."""

    kind = "node"

    def __init__(self, dim: int, num_heads: int = 1, direction_aware: bool = True,
                 schedule: str = "integer", amplitude: str | None = None, xpe_k: int = 4,
                 xpe_aggregate: str = "node"):
        super().__init__(2 * dim, num_heads)
        self.ipe = InRoutePE(dim, direction_aware=direction_aware, schedule=schedule,
                             amplitude=amplitude)
        self.xpe = CrossRoutePE(dim, k=xpe_k, aggregate=xpe_aggregate)

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        return torch.cat([self.ipe(batch), self.xpe(batch)], dim=-1)
