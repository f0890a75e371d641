"""Policy-gradient objectives over K sampled solutions per instance.

Both take ``log_prob`` ``[B, K]`` (sequence log-probabilities, Eq. 9, with the autograd graph of
the whole rollout) and ``cost`` ``[B, K]`` (treated as constants).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def dpo_loss(log_prob: Tensor, cost: Tensor, beta: float = 0.1) -> Tensor:
    """Reference-free DPO (Eq. 10, Algorithm 1) over every pair of the K samples.

    For each pair ``(a, b)``, ``a < b``, the lower-cost sample is preferred; on a tie the second
    one is (the paper's tie rule). With K = 2 this is exactly Eq. 10; K > 2 (multi-start
    rollouts) averages Eq. 10 over all K (K - 1) / 2 pairs of an instance.
    """
    k = log_prob.shape[1]
    first, second = torch.triu_indices(k, k, offset=1, device=log_prob.device)
    first_wins = cost[:, first] < cost[:, second]  # [B, P]
    margin = log_prob[:, first] - log_prob[:, second]  # [B, P]
    margin = torch.where(first_wins, margin, -margin)  # log p(+) - log p(-)
    return -F.logsigmoid(beta * margin).mean()


def reinforce_loss(log_prob: Tensor, cost: Tensor) -> Tensor:
    """REINFORCE with the shared baseline (mean cost of the instance's K samples)."""
    advantage = cost.mean(1, keepdim=True) - cost  # [B, K], positive = better than average
    return -(advantage.detach() * log_prob).mean()




def policy_loss(name: str, log_prob: Tensor, cost: Tensor, beta: float = 0.1) -> Tensor:
    if name == "dpo":
        return dpo_loss(log_prob, cost, beta)
    if name == "reinforce":
        return reinforce_loss(log_prob, cost)
    raise ValueError(f"unknown loss {name!r}; choose dpo or reinforce")


def pair_accuracy(log_prob: Tensor, cost: Tensor) -> float:
    """Share of pairs whose better sample already has the higher log-probability (a metric)."""
    k = log_prob.shape[1]
    first, second = torch.triu_indices(k, k, offset=1, device=log_prob.device)
    first_wins = cost[:, first] < cost[:, second]
    higher = log_prob[:, first] > log_prob[:, second]
    return float((first_wins == higher).float().mean())
