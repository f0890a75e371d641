"""Seeded, vectorised generators of synthetic instances, one per problem.

Each generator returns a *batch*: a dict of numpy arrays with a leading batch axis ``B``.
Node 0 is the depot wherever a problem has one. Formulas (unit square, Euclidean, speed 1):

- TSP (uniform): ``x_i ~ U[0,1]^2``.
- CVRP: locations uniform, clustered (:func:`clustered_locations`), mixed
  (:func:`mixed_locations`) or explosion (:func:`explosion_locations`); demands
  ``d_i ~ U{1..9}``; capacity 50 (MiLoop protocol) or the PE paper's Appendix F rule
  :func:`pe_capacity`.
- VRPTW (PE Appendix F, Solomon-style): CVRP data plus service ``s_i ~ U[0.15, 0.18]``, window
  width ``w_i ~ U[0.18, 0.20]`` and a depot horizon ``[0, T]`` with ``T = 4.6``; the window start
  is ``e_i ~ U[c_0i, T - c_i0 - s_i - w_i]`` so the out-and-back route to every customer alone
  is on time: every instance is feasible by construction.
- PCVRP (PE Appendix F): CVRP data plus prizes ``p_i = kappa * xi_i * d_i`` with
  ``xi_i ~ U[0.8, 1.2]``; the greedy oracle is the nearest-neighbour CVRP solution, where a
  customer's share of its route's cost is ``u_r d_i`` (``u_r`` = route cost / route load);
  ``kappa`` per instance is the median of ``u_r(i) / xi_i``, so about half of the customers
  earn more than their share.
- PDTSP (Li et al. 2022, MiLoop App. B.2): depot + ``n/2`` pickups + ``n/2`` deliveries,
  all uniform; pickup ``i`` pairs with delivery ``i + n/2``.
- KP (BQ protocol): weights and values ``U[0,1]``; capacity one of 10/25/50/100.
"""

from __future__ import annotations

import numpy as np

from routecli.baselines.construction import nearest_neighbour_paths
from routecli.generate.batch import batch_instances, is_batch_file, load_batch, save_batch
from routecli.resources import require_memory

KP_CAPACITIES = (10, 25, 50, 100)
# Peak bytes per node while a batch is drawn: VRPTW, the largest, holds about a dozen float64
# arrays of [B, n] at once (locations, demands, windows, their temporaries).
NODE_BYTES = 200


def check_room(num: int, nodes: int, what: str) -> None:
    """Refuse a batch of ``num`` instances of ``nodes`` nodes that would not fit in memory."""
    require_memory(num * nodes * NODE_BYTES, f"generating {num:,} {what} instance"
                   f"{'s' * (num != 1)} of {nodes:,} nodes")
MILOOP_CVRP_CAPACITY = 50
VRPTW_HORIZON = 4.6


def pe_capacity(n: int) -> int:
    """Vehicle capacity for ``n`` customers, PE paper Appendix F."""
    if n > 1000:
        return 30 + int(1000 / 5 + (n - 1000) / 33.3)
    if n > 20:
        return 30 + n // 5
    return 30


def uniform_locations(rng: np.random.Generator, num: int, nodes: int) -> np.ndarray:
    """``[B, nodes, 2]`` points uniform in the unit square."""
    return rng.random((num, nodes, 2))


def clustered_locations(rng: np.random.Generator, num: int, nodes: int) -> np.ndarray:
    """``[B, nodes, 2]``: depot uniform, customers around ``S ~ U{3..8}`` uniform seeds with
    Gaussian spread ``sigma ~ U[0.03, 0.1]`` per seed (Queiroga et al. 2022 style), clipped
    to the unit square."""
    seeds_per = rng.integers(3, 9, size=num)
    seeds = rng.random((num, 8, 2))
    sigma = rng.uniform(0.03, 0.1, size=(num, 8))
    pick = np.floor(rng.random((num, nodes - 1)) * seeds_per[:, None]).astype(np.int64)
    centre = np.take_along_axis(seeds, pick[..., None], axis=1)
    spread = np.take_along_axis(sigma, pick, axis=1)[..., None]
    customers = np.clip(centre + rng.normal(size=(num, nodes - 1, 2)) * spread, 0.0, 1.0)
    return np.concatenate([rng.random((num, 1, 2)), customers], axis=1)


def mixed_locations(rng: np.random.Generator, num: int, nodes: int) -> np.ndarray:
    """``[B, nodes, 2]``: depot uniform, half of the customers (rounded down) uniform and the
    rest clustered as in :func:`clustered_locations`, in random order (the mixed distribution
    of Bi et al. 2022)."""
    uniform = uniform_locations(rng, num, nodes)
    clustered = clustered_locations(rng, num, nodes)
    take_clustered = rng.permuted(np.arange(nodes - 1)[None].repeat(num, 0), axis=1) \
        >= (nodes - 1) // 2  # [B, nodes-1]
    customers = np.where(take_clustered[..., None], clustered[:, 1:], uniform[:, 1:])
    return np.concatenate([uniform[:, :1], customers], axis=1)


EXPLOSION_RADIUS = (0.1, 0.3)  # range of the explosion radius (Bossek et al. 2019)
EXPLOSION_PUSH = 0.1  # mean extra distance beyond the radius (exponential, rate 10)


def explosion_locations(rng: np.random.Generator, num: int, nodes: int) -> np.ndarray:
    """``[B, nodes, 2]``: uniform points, then the explosion mutation of Bossek et al. (2019):
    a centre ``c ~ U[0,1]^2`` and a radius ``r ~ U[0.1, 0.3]`` per instance; every point ``x``
    within ``r`` of ``c`` moves along ``x - c`` to distance ``r + s`` from it,
    ``s ~ Exp(mean 0.1)``, clipped to the unit square. The depot is a point like any other
    (Jiang et al. 2022 apply it to all nodes), leaving an empty disc with a dense rim."""
    locs = uniform_locations(rng, num, nodes)
    centre = rng.random((num, 1, 2))
    radius = rng.uniform(*EXPLOSION_RADIUS, size=(num, 1, 1))
    offset = locs - centre
    distance = np.linalg.norm(offset, axis=-1, keepdims=True)  # [B, nodes, 1]
    push = radius + rng.exponential(EXPLOSION_PUSH, size=distance.shape)
    moved = centre + offset / np.maximum(distance, 1e-12) * push
    return np.clip(np.where(distance < radius, moved, locs), 0.0, 1.0)


LOCATIONS = {"uniform": uniform_locations, "clustered": clustered_locations,
             "mixed": mixed_locations, "explosion": explosion_locations}
DISTRIBUTIONS = tuple(LOCATIONS)  # of CVRP-family locations


def tsp(num: int, n: int, seed: int) -> dict[str, np.ndarray]:
    if n < 2:
        raise ValueError(f"a TSP needs at least 2 nodes, got {n}")
    check_room(num, n, "TSP")
    rng = np.random.default_rng(seed)
    return {"locs": uniform_locations(rng, num, n)}


def cvrp(num: int, n: int, seed: int, capacity: float | None = MILOOP_CVRP_CAPACITY,
         distribution: str = "uniform") -> dict[str, np.ndarray]:
    """``n`` customers; ``capacity=None`` uses :func:`pe_capacity`."""
    check_room(num, n + 1, "CVRP-family")
    rng = np.random.default_rng(seed)
    if distribution not in LOCATIONS:
        raise ValueError(f"unknown distribution {distribution!r}; expected "
                         f"{', '.join(DISTRIBUTIONS)}")
    locs = LOCATIONS[distribution](rng, num, n + 1)
    demand = rng.integers(1, 10, size=(num, n + 1))
    demand[:, 0] = 0
    cap = pe_capacity(n) if capacity is None else capacity
    if num and n and cap < demand.max():
        raise ValueError(f"capacity {cap:g} is below a demand of {demand.max()} (demands are "
                         "1 to 9): no route could serve it")
    return {"locs": locs, "demand": demand, "capacity": np.full(num, float(cap))}


def vrptw(num: int, n: int, seed: int, capacity: float | None = None,
          distribution: str = "uniform") -> dict[str, np.ndarray]:
    batch = cvrp(num, n, seed, capacity, distribution)
    rng = np.random.default_rng([seed, 1])
    locs = batch["locs"]
    to_depot = np.linalg.norm(locs - locs[:, :1], axis=-1)  # symmetric: c_0i = c_i0
    service = rng.uniform(0.15, 0.18, size=(num, n + 1))
    width = rng.uniform(0.18, 0.20, size=(num, n + 1))
    latest_start = VRPTW_HORIZON - to_depot - service - width
    ready = to_depot + rng.random((num, n + 1)) * (latest_start - to_depot)
    due = ready + width
    service[:, 0] = 0.0
    ready[:, 0] = 0.0
    due[:, 0] = VRPTW_HORIZON
    return {**batch, "ready": ready, "due": due, "service": service}


def pcvrp(num: int, n: int, seed: int, capacity: float | None = None,
          distribution: str = "uniform") -> dict[str, np.ndarray]:
    batch = cvrp(num, n, seed, capacity, distribution)
    rng = np.random.default_rng([seed, 2])
    xi = rng.uniform(0.8, 1.2, size=(num, n + 1))
    unit_cost = np.stack([_nearest_neighbour_unit_cost(batch["locs"][b], batch["demand"][b],
                                                       float(batch["capacity"][b]))
                          for b in range(num)])
    kappa = np.median(unit_cost[:, 1:] / xi[:, 1:], axis=1)
    prize = kappa[:, None] * xi * batch["demand"]
    prize[:, 0] = 0.0
    return {**batch, "prize": prize}


def _nearest_neighbour_unit_cost(locs: np.ndarray, demand: np.ndarray,
                                 capacity: float) -> np.ndarray:
    """Cost per unit of demand of the nearest-neighbour route serving each customer. ``[n+1]``.

    A customer whose prize exceeds its demand share of its route's cost pays for itself in
    this greedy solution; the PCVRP prize scale is set so half of the customers do.
    """
    none = np.zeros(0)
    path = nearest_neighbour_paths(locs, np.zeros((0, 0)), demand.astype(np.float64), capacity,
                                   none, none, none, np.zeros(len(locs), np.int64), True)
    route_id = np.cumsum(path == 0)
    closed = np.concatenate([[0], path, [0]])
    legs = np.linalg.norm(locs[closed[1:]] - locs[closed[:-1]], axis=-1)
    # leg k enters node path[k]; the final leg returns to the depot from the last route.
    leg_route = np.concatenate([route_id, route_id[-1:]])
    leg_route[:-1][path == 0] -= 1  # a leg into the depot closes the previous route
    route_cost = np.bincount(leg_route, weights=legs)
    customers = path != 0
    route_load = np.bincount(route_id[customers], weights=demand[path[customers]],
                             minlength=len(route_cost))
    unit = np.zeros(len(locs))
    unit[path[customers]] = (route_cost / np.maximum(route_load, 1e-12))[route_id[customers]]
    return unit


def pdtsp(num: int, n: int, seed: int) -> dict[str, np.ndarray]:
    """``n`` (even) pickup and delivery nodes plus the depot."""
    if n % 2:
        raise ValueError(f"PDTSP needs an even number of pickup/delivery nodes, got {n}")
    check_room(num, n + 1, "PDTSP")
    rng = np.random.default_rng(seed)
    return {"locs": uniform_locations(rng, num, n + 1)}


def kp(num: int, n: int, seed: int, capacity: float = 25) -> dict[str, np.ndarray]:
    check_room(num, n, "KP")
    rng = np.random.default_rng(seed)
    return {"weights": rng.random((num, n)), "values": rng.random((num, n)),
            "capacity": np.full(num, float(capacity))}


GENERATORS = {"tsp": tsp, "cvrp": cvrp, "vrptw": vrptw, "pcvrp": pcvrp, "pdtsp": pdtsp, "kp": kp}

__all__ = ["DISTRIBUTIONS", "GENERATORS", "KP_CAPACITIES", "MILOOP_CVRP_CAPACITY",
           "batch_instances", "clustered_locations", "cvrp", "explosion_locations", "is_batch_file", "kp",
           "load_batch", "mixed_locations", "pcvrp", "pdtsp", "pe_capacity", "save_batch", "tsp",
           "uniform_locations", "vrptw"]
