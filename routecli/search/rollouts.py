"""Score many ruin-and-repair rollouts of one solution, and replay the chosen one.

A training step of the NDS policy (:mod:`routecli.nds.train`) proposes ``M`` removal sets per
solution; :func:`score_rollouts` repairs each on the candidate copy of the solution and puts
it back, so only costs come out, and :func:`commit_rollout` replays the winner with the same
seed, which makes it the current solution without storing ``M`` repaired copies.
"""

import numba as nb
import numpy as np

from routecli.search.asa import rollout
from routecli.search.state import sync_state


@nb.njit  # uncached: numba keeps a stale cache when a callee in another module changes
def score_rollouts(data, cur, cand, ws, removals, blink, cur_cost, seeds, costs) -> None:  # noqa: ANN001
    """Cost of each row of ``removals`` ``[M, K]`` (-1 padded) removed from ``cur`` and
    repaired (``inf`` if infeasible) into ``costs`` ``[M]``; the repair of row ``m`` draws from
    ``seeds[m]`` so :func:`commit_rollout` can replay it. ``cand`` equals ``cur`` on entry and
    on exit."""
    touched, moved, _, _, counts, _, buf = ws[:7]
    for m in range(removals.shape[0]):
        row = removals[m]
        count = 0
        while count < row.shape[0] and row[count] >= 0:
            count += 1
        np.random.seed(seeds[m])
        costs[m] = rollout(data, cur, cand, ws, row, count, blink, cur_cost)
        sync_state(cur, cand, touched, counts[0], moved, counts[1], buf)


@nb.njit  # uncached: numba keeps a stale cache when a callee in another module changes
def commit_rollout(data, cur, cand, ws, row, blink, cur_cost, seed) -> float:  # noqa: ANN001
    """Replay one scored rollout (same ``seed``) and make it the current solution."""
    touched, moved, _, _, counts, _, buf = ws[:7]
    count = 0
    while count < row.shape[0] and row[count] >= 0:
        count += 1
    np.random.seed(seed)
    cost = rollout(data, cur, cand, ws, row, count, blink, cur_cost)
    sync_state(cand, cur, touched, counts[0], moved, counts[1], buf)
    return cost
