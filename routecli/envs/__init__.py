"""Batched torch construction environments (state, feasibility masks, step, reward)."""

from routecli.envs.base import Observation, compact, normalise_coords
from routecli.envs.cvrp import CVRPEnv
from routecli.envs.kp import ItemObservation, KPEnv
from routecli.envs.pdtsp import PairObservation, PDTSPEnv
from routecli.envs.tsp import TSPEnv

__all__ = ["CVRPEnv", "ItemObservation", "KPEnv", "Observation", "PDTSPEnv", "PairObservation",
           "TSPEnv", "compact", "normalise_coords"]
