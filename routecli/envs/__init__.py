"""Batched torch construction environments (state, feasibility masks, step, reward)."""

from routecli.envs.base import Observation, compact, normalise_coords
from routecli.envs.cvrp import CVRPEnv
from routecli.envs.tsp import TSPEnv

__all__ = ["CVRPEnv", "Observation", "TSPEnv", "compact", "normalise_coords"]
