"""Numba kernels for the hot loops: edge lengths under TSPLIB rules, tour and route costs,
cumulative route distance and static k-nearest-neighbour lists."""

from routecli.kernels.distance import (
    RULES,
    cumulative_route_distance,
    edge_lengths,
    prepare_coords,
    routes_length,
    rule_code,
    tour_length,
)
from routecli.kernels.knn import knn

__all__ = [
    "RULES",
    "cumulative_route_distance",
    "edge_lengths",
    "knn",
    "prepare_coords",
    "routes_length",
    "rule_code",
    "tour_length",
]
