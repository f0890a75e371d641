"""Removal ("ruin" / deconstruction) policies behind one interface.

A policy looks at the current solution and proposes, for each of ``rollouts`` independent
rollouts, which customers to remove; the engine repairs every rollout and keeps the best
(PE paper Appendix E, ASA). Two non-neural policies live here, both numba kernels:

- :class:`RandomRemoval`: ``k`` customers uniformly at random (the control of the issue);
- :class:`StringRemoval`: adjacent string removal in the spirit of SISRs (Christiaens and
  Vanden Berghe, 2020): from a random seed customer, walk its nearest neighbours and cut one
  string (or a string with a preserved middle block, a "split string") out of each route met,
  until a random number of routes is ruined; the mean number of removed customers is ``k``.

The learned deconstruction policy (``routecli.nds.policy``) implements the same
:class:`RemovalPolicy` protocol: it reads ``problem.unit_coords`` through
:func:`routecli.problems.geometry.augment8`
(the 8 symmetries of the unit square, which leave every Euclidean distance, hence every
solution cost, unchanged), spreads its rollouts over the 8 copies, and returns the removals.
"""

from __future__ import annotations

from typing import Protocol

import numba as nb
import numpy as np

from routecli.errors import OptionError
from routecli.search.options import Removal
from routecli.search.state import (
    POS,
    PRED,
    ROUTE,
    ROUTES,
    SERVED,
    SIZE,
    SUCC,
    SearchProblem,
    SearchState,
)

POLICY_RANDOM = 0
POLICY_STRINGS = 1
MAX_STRING = 10  # SISRs' L^max: the longest string cut from one route
SPLIT_RATE = 0.5  # probability of a split string instead of a plain one
PRESERVE_GROWTH = 0.5  # a split string's preserved block grows by one with this probability


class RemovalPolicy(Protocol):
    """Proposes customers to remove from the current solution, several rollouts at once.

    ``propose`` returns ``[rollouts, K]`` int64 customer ids (1..N), each row padded with -1
    (PCVRP: an unserved customer in a row is offered for insertion instead);
    ``K`` may differ from ``k``, which is the policy's removal budget (exact for random and
    learned policies, the mean for string removal). ``kernel`` is the id of an equivalent
    numba kernel the engine may run in its compiled loop, or None (a torch policy) to make
    the engine call ``propose`` once per iteration. A policy with both (a hybrid) sets
    ``every``: the engine runs ``every`` kernel iterations, then one iteration on the rows of
    ``propose``, and so on; ``every`` is None for a policy that is one or the other. Only a
    policy without a kernel, or a hybrid, is asked to ``propose``; a hybrid may return another
    number of rows than ``rollouts`` (the engine's ``rollouts`` and ``k`` size the kernel's
    iterations, the hybrid's own settings its proposals).
    """

    name: str
    kernel: int | None
    every: int | None

    def propose(self, problem: SearchProblem, state: SearchState, rng: np.random.Generator,
                k: int, rollouts: int) -> np.ndarray: ...


@nb.njit(cache=True)
def _seed(seed: int) -> None:
    np.random.seed(seed)


def seed_kernels(seed: int) -> None:
    """Seed the random stream numba kernels draw from (separate from numpy's)."""
    _seed(seed)


@nb.njit(cache=True)
def random_served(nodes) -> int:  # noqa: ANN001
    """A uniformly random served customer (rejection sampling; -1 when none is served)."""
    n = nodes.shape[0]
    for _ in range(64 * n):
        c = 1 + np.random.randint(n - 1)
        if nodes[c, ROUTE] >= 0:
            return c
    return -1


@nb.njit(cache=True)
def ruin_random(nodes, totals, k, out) -> int:  # noqa: ANN001
    """Write ``min(k, served)`` distinct random served customers into ``out``; return the count.

    A partial Fisher-Yates shuffle of the served customers in id order; when every customer is
    served (CVRP, VRPTW) that list is ``1..N`` and only its ``2 k`` swapped entries are stored,
    so a draw costs ``O(k^2)``, not ``O(N)``."""
    n = nodes.shape[0] - 1
    count = totals[SERVED]
    take = min(k, count)
    if count == n:  # served[i] = i + 1, except at the positions swapped so far
        pos = np.empty(2 * take, np.int64)
        val = np.empty(2 * take, np.int64)
        swapped = 0
        for i in range(take):
            j = i + np.random.randint(count - i)
            vi = _entry(pos, val, swapped, i)
            vj = _entry(pos, val, swapped, j)
            swapped = _store(pos, val, swapped, i, vj)
            swapped = _store(pos, val, swapped, j, vi)
            out[i] = vj
        return take
    served = np.empty(count, np.int64)
    listed = 0
    for c in range(1, n + 1):
        if nodes[c, ROUTE] >= 0:
            served[listed] = c
            listed += 1
    for i in range(take):  # partial Fisher-Yates
        j = i + np.random.randint(count - i)
        served[i], served[j] = served[j], served[i]
        out[i] = served[i]
    return take


@nb.njit(cache=True, inline="always")
def _entry(pos, val, size, i) -> int:  # noqa: ANN001
    """Entry ``i`` of the identity list ``1..N`` with the swaps ``pos -> val`` applied."""
    for t in range(size):
        if pos[t] == i:
            return val[t]
    return i + 1


@nb.njit(cache=True, inline="always")
def _store(pos, val, size, i, v) -> int:  # noqa: ANN001
    for t in range(size):
        if pos[t] == i:
            val[t] = v
            return size
    pos[size] = i
    val[size] = v
    return size + 1


@nb.njit(cache=True)
def _cut(nodes, v, start, length, keep_from, keep_len, out, count) -> int:  # noqa: ANN001
    """Append to ``out`` the customers at route positions ``start .. start+length-1`` of
    ``v``'s route, except the preserved block ``keep_from .. keep_from+keep_len-1``."""
    node = v
    for _ in range(nodes[v, POS] - start):
        node = nodes[node, PRED]
    for p in range(start, start + length):
        if p < keep_from or p >= keep_from + keep_len:
            out[count] = node
            count += 1
        node = nodes[node, SUCC]
    return count


@nb.njit(cache=True)
def ruin_strings(nodes, routes, totals, neighbours, mean_removed, unserved, out) -> int:  # noqa: ANN001
    """SISR-style adjacent string removal around a random seed; return the count in ``out``.

    With ``unserved`` (PCVRP) the seed may be any customer and the unserved customers met on
    the walk through its neighbours are listed too, as candidates for insertion."""
    served = totals[SERVED]
    num_routes = totals[ROUTES]
    if served == 0 and not unserved:
        return 0
    max_len = min(float(MAX_STRING), served / max(num_routes, 1)) if served else 1.0
    max_strings = 4.0 * mean_removed / (1.0 + max_len) - 1.0
    strings = max(1, int(np.random.uniform(1.0, max(max_strings, 1.0) + 1.0)))
    seed = 1 + np.random.randint(nodes.shape[0] - 1) if unserved else random_served(nodes)
    ruined = np.empty(strings, np.int64)
    done = 0
    count = 0
    for i in range(-1, neighbours.shape[1]):
        if done >= strings:
            break
        v = seed if i < 0 else neighbours[seed, i]
        t = nodes[v, ROUTE]
        if t < 0:
            if unserved:
                out[count] = v
                count += 1
            continue
        seen = False
        for j in range(done):
            seen = seen or ruined[j] == t
        if seen:
            continue
        size = routes[t, SIZE]
        length = int(np.random.uniform(1.0, min(float(size), max_len) + 1.0))
        keep = 0
        if length < size and np.random.random() < SPLIT_RATE:
            keep = 1
            while length + keep < size and np.random.random() < PRESERVE_GROWTH:
                keep += 1
        span = length + keep
        pos = nodes[v, POS]
        lo = max(0, pos - span + 1)
        hi = min(pos, size - span)
        start = lo + np.random.randint(hi - lo + 1)
        keep_from = start + np.random.randint(length + 1)
        count = _cut(nodes, v, start, span, keep_from, keep, out, count)
        ruined[done] = t
        done += 1
    return count


@nb.njit(cache=True)
def string_sets(nodes, routes, totals, neighbours, out) -> None:  # noqa: ANN001
    """Fill every row of ``out`` ``[M, k]`` with ``k`` distinct served customers: the first
    ``k`` of a string removal (:func:`ruin_strings` sized for 1.5 k, so most draws reach k;
    the seed's string first, then strings of the routes nearest to it), topped up with random
    served customers when a draw falls short. ``k`` must not exceed the served count. These
    fixed-size, ordered sets are what a pointer policy can imitate (NDS warm start)."""
    k = out.shape[1]
    buf = np.empty(nodes.shape[0], np.int64)
    listed = np.zeros(nodes.shape[0], np.bool_)
    for m in range(out.shape[0]):
        count = ruin_strings(nodes, routes, totals, neighbours, 1.5 * k, False, buf)
        take = 0
        for i in range(min(count, k)):
            out[m, take] = buf[i]
            listed[buf[i]] = True
            take += 1
        while take < k:
            c = random_served(nodes)
            if not listed[c]:
                out[m, take] = c
                listed[c] = True
                take += 1
        for i in range(k):
            listed[out[m, i]] = False


class RandomRemoval:
    """Remove ``k`` customers chosen uniformly at random among the served ones."""

    name = "random"
    kernel: int | None = POLICY_RANDOM
    every: int | None = None

    def propose(self, problem: SearchProblem, state: SearchState, rng: np.random.Generator,
                k: int, rollouts: int) -> np.ndarray:
        out = np.full((rollouts, k), -1, np.int64)
        served = state.served()
        for m in range(rollouts):
            pick = rng.choice(served, size=min(k, len(served)), replace=False)
            out[m, : len(pick)] = pick
        return out


class StringRemoval:
    """SISR-style adjacent string removal removing ``k`` customers on average."""

    name = "strings"
    kernel: int | None = POLICY_STRINGS
    every: int | None = None

    def propose(self, problem: SearchProblem, state: SearchState, rng: np.random.Generator,
                k: int, rollouts: int) -> np.ndarray:
        seed_kernels(int(rng.integers(2**31)))
        buf = np.empty(problem.num_nodes, np.int64)
        rows = []
        for _ in range(rollouts):
            count = ruin_strings(state.nodes, state.routes, state.totals, problem.neighbours,
                                 float(k), problem.optional, buf)
            rows.append(buf[:count].copy())
        width = max(1, max(len(r) for r in rows))
        out = np.full((rollouts, width), -1, np.int64)
        for m, row in enumerate(rows):
            out[m, : len(row)] = row
        return out


POLICIES: dict[Removal, type] = {"random": RandomRemoval, "strings": StringRemoval}


def make_policy(name: str) -> RemovalPolicy:
    """A non-neural policy by name (``random`` or ``strings``)."""
    if name not in POLICIES:
        raise OptionError(f"unknown removal policy {name!r}; choose from {', '.join(POLICIES)}")
    return POLICIES[name]()
