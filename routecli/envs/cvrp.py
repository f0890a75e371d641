"""Batched CVRP construction (MiLoop Appendix B.1): routes from depot 0, capacity reset on return.

At each step the candidates ``A_t`` are the unvisited customers plus the depot when the vehicle
is away from it; the feasible set is ``{i in A_t : q_i / C <= c_t}`` (Eq. 11). A finished
instance (all customers served, back at the depot) idles at the depot with a zero-length
no-op until the whole batch is done.
"""

from __future__ import annotations

import torch
from torch import Tensor

from routecli.envs.base import CandidateSets, Observation, Walks, compact, normalise_coords

_EPS = 1e-6  # demands are integers / C: guards the float comparison against round-off


class CVRPEnv(Walks):
    """locs ``[B, N+1, 2]`` (depot first), demand ``[B, N+1]`` (depot 0), capacity ``[B]``;
    ``candidates`` limits every step to the depot and the K nearest unvisited customers that
    fit (all rows must then be images of one instance)."""

    problem = "cvrp"

    def __init__(self, locs: Tensor, demand: Tensor, capacity: Tensor,
                 candidates: CandidateSets | None = None):
        self.locs = locs
        self.candidates = candidates
        self.batch, self.num_nodes = locs.shape[:2]
        self.demand = demand.float() / capacity.float()[:, None]  # [B, N+1] q_i / C
        self.remaining = torch.ones(self.batch, device=locs.device)  # [B] c_t
        self.visited = torch.zeros(self.batch, self.num_nodes, dtype=torch.bool,
                                   device=locs.device)
        self.visited[:, 0] = True  # the depot is never a customer to serve
        self.served = torch.zeros(self.batch, dtype=torch.long, device=locs.device)
        self.first = torch.zeros(self.batch, dtype=torch.long, device=locs.device)
        self.current = self.first.clone()
        self.actions: list[Tensor] = [self.first.clone()]

    @property
    def done(self) -> Tensor:
        """``[B]`` bool: all customers served and the vehicle back at the depot."""
        return (self.served == self.num_nodes - 1) & (self.current == 0)

    def available(self) -> Tensor:
        """``[B, N+1]`` the candidate set A_t; a finished instance keeps only the depot."""
        avail = ~self.visited
        avail[:, 0] = (self.current != 0) | self.done
        return avail

    def observe(self) -> Observation:
        if self.candidates is None:
            cand, cand_valid = compact(self.available(), pad_id=self.num_nodes)  # [B, K]
        else:
            cand, cand_valid = self.candidates.select(
                self.current, self.visited, self.num_nodes,
                depot_open=(self.current != 0) | self.done, remaining=self.remaining + _EPS)
        nodes = torch.cat([self.first[:, None], self.current[:, None], cand], 1)  # [B, R]
        valid = torch.cat([torch.ones_like(nodes[:, :2], dtype=torch.bool), cand_valid], 1)
        safe = nodes.clamp_max(self.num_nodes - 1)
        raw = self.locs.gather(1, safe[..., None].expand(-1, -1, 2))
        coords = normalise_coords(raw, valid)  # [B, R, 2]
        demand = self.demand.gather(1, safe).masked_fill(~valid, 0.0)  # [B, R]
        features = torch.cat([coords, demand[..., None]], -1)  # [B, R, 3]
        fits = demand[:, 2:] <= self.remaining[:, None] + _EPS
        feasible = cand_valid & (fits | (cand == 0))
        return Observation(nodes, features, coords, valid, feasible, cand_valid.sum(1),
                           self.remaining.clone())

    def step(self, nodes: Tensor) -> None:
        """Move to ``nodes`` ``[B]``: serve a customer or return to the depot (capacity reset)."""
        rows = torch.arange(self.batch, device=nodes.device)
        at_depot = nodes == 0
        self.remaining = torch.where(at_depot, torch.ones_like(self.remaining),
                                     self.remaining - self.demand[rows, nodes])
        self.served += ~self.visited[rows, nodes]
        self.visited[rows, nodes] = True
        self.current = nodes
        self.actions.append(nodes)
