import math

import torch

from routecli.train.losses import dpo_loss, pair_accuracy, policy_loss, reinforce_loss


def test_dpo_two_samples_is_eq10():
    log_prob = torch.tensor([[-3.0, -5.0], [-4.0, -1.0]])
    cost = torch.tensor([[2.0, 1.0], [1.0, 3.0]])  # row 0: second better, row 1: first better
    margins = [(-5.0) - (-3.0), (-4.0) - (-1.0)]
    expected = -sum(math.log(1 / (1 + math.exp(-0.1 * m))) for m in margins) / 2
    assert math.isclose(float(dpo_loss(log_prob, cost, beta=0.1)), expected, rel_tol=1e-6)


def test_dpo_tie_prefers_second_sample():
    log_prob = torch.tensor([[-1.0, -2.0]])
    tie = dpo_loss(log_prob, torch.tensor([[1.0, 1.0]]), beta=1.0)
    second_better = dpo_loss(log_prob, torch.tensor([[1.0, 0.5]]), beta=1.0)
    assert float(tie) == float(second_better)


def test_dpo_gradient_raises_the_better_sample():
    log_prob = torch.zeros(1, 4, requires_grad=True)
    dpo_loss(log_prob, torch.tensor([[3.0, 1.0, 2.0, 4.0]])).backward()
    order = torch.argsort(log_prob.grad[0]).tolist()
    assert order == [1, 2, 0, 3]  # descending the loss raises the cheapest most


def test_reinforce_shared_baseline():
    log_prob = torch.zeros(1, 2, requires_grad=True)
    reinforce_loss(log_prob, torch.tensor([[1.0, 3.0]])).backward()
    assert log_prob.grad.tolist() == [[-0.5, 0.5]]
    assert float(policy_loss("reinforce", log_prob, torch.ones(1, 2)).detach()) == 0.0


def test_pair_accuracy():
    assert pair_accuracy(torch.tensor([[0.0, -1.0, -2.0]]), torch.tensor([[1.0, 2.0, 3.0]])) == 1.0
