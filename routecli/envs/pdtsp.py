"""Batched pickup-and-delivery TSP construction (MiLoop Appendix B.2).

Node 0 is the depot, nodes ``1..r`` the pickups and ``r+1..2r`` their deliveries (pickup ``i``
pairs with delivery ``i + r``). The tour starts at the depot (``pi_1 = 0``), so every step shows
the policy ``[depot, current, unvisited...]``. All unvisited nodes are candidates ``A_t`` (locked
deliveries too: they take part in attention and memory), but only unvisited pickups and the
deliveries whose pickup is visited are feasible (Eq. 17). Every tour has ``2r`` decisions, so
the batch moves in lock step.

Large instances: with :class:`~routecli.envs.base.CandidateSets` a step sees only the ``K``
nearest *feasible* nodes of the current node, so a candidate set can never hide the only
feasible ones (far pickups, or the one delivery still released).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from routecli.envs.base import CandidateSets, LockStepWalks, Observation, compact, normalise_coords

DEPOT, PICKUP, DELIVERY = 0, 1, 2  # node kinds


@dataclass
class PairObservation(Observation):
    """:class:`Observation` plus the pairing. ``features`` ``[B, R, 4]`` hold each row's
    normalised coordinates and, on pickup rows, its delivery's (zeros elsewhere, Eq. 18)."""

    kind: Tensor | None = None  # [B, R] long: DEPOT, PICKUP or DELIVERY (padding: DELIVERY)
    partner: Tensor | None = None  # [B, R] long: the delivery of a pickup row, else N (spare)


def node_kinds(num_nodes: int, device: torch.device | str = "cpu") -> Tensor:
    """``[N]`` kind of every node id (plus one DELIVERY entry for the spare id N)."""
    r = (num_nodes - 1) // 2
    kinds = torch.full((num_nodes + 1,), DELIVERY, dtype=torch.long, device=device)
    kinds[0] = DEPOT
    kinds[1:r + 1] = PICKUP
    return kinds


class PDTSPEnv(LockStepWalks):
    """locs ``[B, N, 2]`` with ``N = 2r + 1`` (depot first); ``candidates`` limits every step to
    the K nearest feasible nodes (all rows must then be images of one instance)."""

    problem = "pdtsp"

    def __init__(self, locs: Tensor, candidates: CandidateSets | None = None):
        self.locs = locs
        self.candidates = candidates
        self.batch, self.num_nodes = locs.shape[:2]
        if self.num_nodes < 3 or (self.num_nodes - 1) % 2:
            raise ValueError(f"a PDTSP needs 2r + 1 nodes (r >= 1), got {self.num_nodes}")
        self.requests = (self.num_nodes - 1) // 2
        device = locs.device
        self.kinds = node_kinds(self.num_nodes, device)  # [N+1]
        self.partners = torch.full((self.num_nodes + 1,), self.num_nodes, dtype=torch.long,
                                   device=device)  # [N+1]
        self.partners[1:self.requests + 1] = self.requests + torch.arange(
            1, self.requests + 1, device=self.partners.device)
        self.visited = torch.zeros(self.batch, self.num_nodes, dtype=torch.bool, device=device)
        self.visited[:, 0] = True
        self.released = self.kinds[None, :self.num_nodes] == PICKUP  # [B, N] feasible now (Eq. 17)
        self.released = self.released.expand(self.batch, -1).clone()
        self.first = torch.zeros(self.batch, dtype=torch.long, device=device)
        self.current = self.first.clone()
        self.actions: list[Tensor] = [self.first.clone()]

    def observe(self) -> PairObservation:
        pad = self.num_nodes
        if self.candidates is None:
            cand, cand_valid = compact(~self.visited, pad_id=pad)  # [B, K]
        else:
            cand, cand_valid = self.candidates.select(self.current, ~self.released, pad)
        nodes = torch.cat([self.first[:, None], self.current[:, None], cand], 1)  # [B, R]
        valid = torch.cat([torch.ones_like(nodes[:, :2], dtype=torch.bool), cand_valid], 1)
        partner = self.partners[nodes].masked_fill(~valid, pad)  # [B, R]
        paired = partner != pad
        # rows and their paired deliveries share one per-step normalisation
        ids = torch.cat([nodes, partner], 1).clamp_max(self.num_nodes - 1)  # [B, 2R]
        raw = self.locs.gather(1, ids[..., None].expand(-1, -1, 2))
        both = normalise_coords(raw, torch.cat([valid, paired], 1))  # [B, 2R, 2]
        coords, partner_coords = both.split(nodes.shape[1], dim=1)  # [B, R, 2] each
        features = torch.cat([coords, partner_coords], -1)  # [B, R, 4]
        feasible = cand_valid & self.released.gather(1, cand.clamp_max(self.num_nodes - 1))
        return PairObservation(nodes, features, coords, valid, feasible, cand_valid.sum(1),
                               kind=self.kinds[nodes], partner=partner)

    def step(self, nodes: Tensor) -> None:
        """Visit ``nodes`` ``[B]``; a visited pickup releases its delivery."""
        rows = torch.arange(self.batch, device=nodes.device)
        self.visited[rows, nodes] = True
        self.released[rows, nodes] = False
        pickup = self.kinds[nodes] == PICKUP
        self.released[rows[pickup], self.partners[nodes[pickup]]] = True
        self.current = nodes
        self.actions.append(nodes)
