"""Batched TSP construction: start at ``first``, visit every unvisited node once, close the tour."""

from __future__ import annotations

import torch
from torch import Tensor

from routecli.envs.base import CandidateSets, LockStepWalks, Observation, compact, normalise_coords


class TSPEnv(LockStepWalks):
    """B instances of N nodes, all constructed in lock step (every tour has N - 1 decisions).

    locs ``[B, N, 2]``; start ``[B]`` the first node of each tour; ``candidates`` limits every
    step to the K nearest unvisited nodes (all rows must then be images of one instance).
    """

    problem = "tsp"

    def __init__(self, locs: Tensor, start: Tensor, candidates: CandidateSets | None = None):
        self.locs = locs
        self.candidates = candidates
        self.batch, self.num_nodes = locs.shape[:2]
        rows = torch.arange(self.batch, device=locs.device)
        self.visited = torch.zeros(self.batch, self.num_nodes, dtype=torch.bool,
                                   device=locs.device)
        self.visited[rows, start] = True
        self.first = start.clone()
        self.current = start.clone()
        self.actions: list[Tensor] = [start.clone()]

    def observe(self) -> Observation:
        if self.candidates is None:
            cand, cand_valid = compact(~self.visited, pad_id=self.num_nodes)  # [B, K]
        else:
            cand, cand_valid = self.candidates.select(self.current, self.visited, self.num_nodes)
        nodes = torch.cat([self.first[:, None], self.current[:, None], cand], 1)  # [B, R]
        valid = torch.cat([torch.ones_like(nodes[:, :2], dtype=torch.bool), cand_valid], 1)
        raw = self.locs.gather(1, nodes.clamp_max(self.num_nodes - 1)[..., None].expand(-1, -1, 2))
        coords = normalise_coords(raw, valid)  # [B, R, 2]
        return Observation(nodes, coords, coords, valid, cand_valid, cand_valid.sum(1))

    def step(self, nodes: Tensor) -> None:
        """Visit ``nodes`` ``[B]`` (node ids, not candidate positions)."""
        self.visited[torch.arange(self.batch, device=nodes.device), nodes] = True
        self.current = nodes
        self.actions.append(nodes)
