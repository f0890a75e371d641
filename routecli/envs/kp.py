"""Batched 0-1 knapsack construction (MiLoop Appendix B.3).

Each step the candidates ``A_t`` are the unselected items (all of them, also those too heavy for
the remaining capacity ``c_t``: they take part in attention and memory); the feasible ones are
``{i in A_t : w_i <= c_t}``. An instance is done when no unselected item fits; until the whole
batch is done, a finished instance makes no-op steps (one formally feasible padding column,
ignored by :meth:`KPEnv.step`, recorded as item id ``N``).

Item features (Eq. 23) are ``[v_i / w_i, w_i / c_t]``, with two numerical stabilisers the paper
leaves out: the value density is divided by the largest density among the candidates (so it
lies in (0, 1] whatever the units of a file), and ``w_i / c_t`` is capped at
:data:`RELATIVE_WEIGHT_CAP` (any item above 1 does not fit; near the end ``c_t`` tends to 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from routecli.envs.base import compact

RELATIVE_WEIGHT_CAP = 2.0
_EPS = 1e-9  # remaining capacity is a float difference: guards the fit test against round-off


@dataclass
class ItemObservation:
    """One decision step for B knapsacks; K = max |A_t| (no first/current rows)."""

    nodes: Tensor  # [B, K] long: item id per candidate (padding: N)
    features: Tensor  # [B, K, 2]: value density / its max, w_i / c_t (capped)
    valid: Tensor  # [B, K] bool: False on padding
    feasible: Tensor  # [B, K] bool: candidates that fit (a finished row: its first column)
    num_candidates: Tensor  # [B] long: |A_t|
    weights: Tensor  # [B, K] float32 (padding 1)
    values: Tensor  # [B, K] float32 (padding 0)


class KPEnv:
    """weights, values ``[B, N]`` (> 0 and >= 0), capacity ``[B]``."""

    problem = "kp"

    def __init__(self, weights: Tensor, values: Tensor, capacity: Tensor):
        # float64 bookkeeping, so that what fits here fits when the solution is validated
        self.weights = weights.double()
        self.values = values.double()
        self.batch, self.num_nodes = weights.shape
        self.device = weights.device
        self.remaining = capacity.double().clone()  # [B] c_t
        self.selected = torch.zeros(self.batch, self.num_nodes, dtype=torch.bool,
                                    device=self.device)
        self.actions: list[Tensor] = []

    def fits(self) -> Tensor:
        """``[B, N]`` unselected items that fit the remaining capacity."""
        return ~self.selected & (self.weights <= self.remaining[:, None] + _EPS)

    @property
    def done(self) -> Tensor:
        """``[B]`` bool: nothing left fits."""
        return ~self.fits().any(1)

    def observe(self) -> ItemObservation:
        pad = self.num_nodes
        cand, valid = compact(~self.selected, pad_id=pad)  # [B, K]
        safe = cand.clamp_max(pad - 1)
        w = self.weights.gather(1, safe).masked_fill(~valid, 1.0)  # [B, K]
        v = self.values.gather(1, safe).masked_fill(~valid, 0.0)
        density = v / w
        top = density.masked_fill(~valid, 0.0).amax(1, keepdim=True).clamp_min(1e-12)
        relative = (w / self.remaining[:, None].clamp_min(1e-12)).clamp_max(RELATIVE_WEIGHT_CAP)
        features = torch.stack([density / top, relative], -1).masked_fill(~valid[..., None], 0.0)
        feasible = valid & (w <= self.remaining[:, None] + _EPS)
        finished = ~feasible.any(1)
        feasible[:, 0] |= finished  # a no-op column for finished instances
        return ItemObservation(cand, features.float(), valid, feasible, valid.sum(1), w.float(),
                               v.float())

    def step(self, items: Tensor) -> None:
        """Take ``items`` ``[B]`` (item ids); finished instances ignore theirs."""
        rows = torch.arange(self.batch, device=items.device)
        live = ~self.done
        take = items.clamp_max(self.num_nodes - 1)
        self.selected[rows[live], take[live]] = True
        self.remaining = self.remaining - torch.where(live, self.weights[rows, take],
                                                      torch.zeros_like(self.remaining))
        self.actions.append(torch.where(live, items, torch.full_like(items, self.num_nodes)))

    def paths(self) -> Tensor:
        """``[B, T]`` items in the order taken, ``N`` after an instance finished."""
        if not self.actions:
            return torch.zeros(self.batch, 0, dtype=torch.long, device=self.device)
        return torch.stack(self.actions, 1)

    def value(self) -> Tensor:
        """``[B]`` total value of the selected items."""
        return (self.values * self.selected).sum(1)

    def cost(self) -> Tensor:
        """``[B]`` the negated value (every policy objective here is minimised)."""
        return -self.value()
