import pytest
import torch

from routecli.envs import CVRPEnv, TSPEnv
from routecli.miloop.model import MiLoop, MiLoopConfig, rollout, write_memory


def small(problem: str, **kw) -> MiLoop:
    torch.manual_seed(0)
    return MiLoop(MiLoopConfig(problem=problem, dim=16, ff_dim=32, **{"layers": 2, **kw}))


def cvrp_env(batch=3, n=8, capacity=15.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    locs = torch.rand(batch, n + 1, 2, generator=g)
    demand = torch.randint(1, 10, (batch, n + 1), generator=g)
    demand[:, 0] = 0
    return CVRPEnv(locs, demand, torch.full((batch,), capacity))


def test_write_order_depot_then_current_then_candidates():
    memory = torch.zeros(1, 5, 1)  # 4 nodes + spare slot
    rows = torch.tensor([[[1.0], [2.0], [3.0], [4.0]]])  # first, current, two candidates
    # the depot (0) is first and current: the current-node row wins
    out = write_memory(memory, torch.tensor([[0, 0, 2, 3]]), rows)
    assert out[0, :4, 0].tolist() == [2.0, 0.0, 3.0, 4.0]
    # the depot is first and a candidate (return action): the candidate row wins
    out = write_memory(memory, torch.tensor([[0, 1, 0, 3]]), rows)
    assert out[0, :4, 0].tolist() == [3.0, 2.0, 0.0, 4.0]


def test_memory_rows_of_other_nodes_untouched_and_tsp_first_call_uses_embeddings():
    model = small("tsp")
    env = TSPEnv(torch.rand(2, 7, 2), torch.tensor([0, 4]))
    env.step(torch.tensor([2, 1]))
    env.step(torch.tensor([3, 0]))  # visited: {0,2,3} and {4,1,0}
    memory = torch.randn(2, 8, 16)
    obs = env.observe()
    _, new = model.step(obs, memory, first_call=False)
    for b, untouched in ((0, [2]), (1, [1])):  # visited, neither first nor current
        for node in untouched:
            assert torch.equal(new[b, node], memory[b, node])
    # first call: the gate mixes the embedding with itself, so the result never reads memory
    _, a = model.step(obs, torch.zeros(2, 8, 16), first_call=True)
    _, b = model.step(obs, torch.randn(2, 8, 16), first_call=True)
    rows = obs.nodes
    assert torch.equal(a[torch.arange(2)[:, None], rows], b[torch.arange(2)[:, None], rows])


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_logits_clipped_and_infeasible_masked(problem):
    model = small(problem, clip=3.0)
    env = TSPEnv(torch.rand(2, 9, 2), torch.tensor([0, 1])) if problem == "tsp" else cvrp_env()
    obs = env.observe()
    logits, _ = model.step(obs, model.new_memory(env.batch, env.num_nodes, "cpu"), True)
    assert torch.isneginf(logits[~obs.feasible]).all()
    assert (logits[obs.feasible].abs() <= 3.0).all()


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_policy_invariant_to_translation_and_scale(problem):
    """Per-step coordinate normalisation (Section 3.1): the same decisions at any scale."""
    model = small(problem).eval()
    env_a = TSPEnv(torch.rand(2, 10, 2), torch.tensor([0, 5])) if problem == "tsp" else cvrp_env()
    locs_b = env_a.locs * 37.0 + 5.0
    env_b = (TSPEnv(locs_b, torch.tensor([0, 5])) if problem == "tsp"
             else CVRPEnv(locs_b, (env_a.demand * 15).round().long(), torch.full((3,), 15.0)))
    with torch.no_grad():
        a, b = rollout(model, env_a, "greedy"), rollout(model, env_b, "greedy")
    assert torch.equal(a.actions, b.actions)
    torch.testing.assert_close(a.log_prob, b.log_prob, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kw", [dict(fusion=False), dict(gated=False), dict(memory=False),
                                dict(layers=1)])
def test_ablations_build_and_roll_out(kw):
    model = small("cvrp", **kw)
    result = rollout(model, cvrp_env())
    result.log_prob.sum().backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)
    if kw.get("memory") is False:  # a plain dynamic embedding carries nothing
        assert model.fuse_cand.weight.grad is None and model.gate_cand.weight.grad is None
    if kw.get("fusion") is False:
        assert model.fuse_cand.weight.grad is None
    if kw.get("gated") is False:
        assert model.gate_cand.weight.grad is None
    assert len(model.blocks) == kw.get("layers", 2)


def test_memory_changes_decisions_and_is_carried_by_node_identity():
    """With memory on, the second step depends on what the first step wrote."""
    model = small("tsp")
    env = TSPEnv(torch.rand(1, 6, 2), torch.tensor([0]))
    obs = env.observe()
    _, memory = model.step(obs, model.new_memory(1, 6, "cpu"), first_call=True)
    env.step(torch.tensor([3]))
    obs2 = env.observe()
    with_memory, _ = model.step(obs2, memory, first_call=False)
    without, _ = model.step(obs2, torch.zeros_like(memory), first_call=False)
    assert not torch.allclose(with_memory, without)


def test_forced_first_action_and_replay():
    model = small("cvrp")
    start = torch.tensor([3, 1, 8])
    result = rollout(model, cvrp_env(), first_action=start)
    assert result.actions[:, 1].tolist() == start.tolist()
    again = rollout(model, cvrp_env(), replay=result.actions, first_action=start)
    assert torch.equal(again.actions, result.actions)
    torch.testing.assert_close(again.log_prob, result.log_prob)


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_bf16_rollout_keeps_float32_gradients_and_bfloat16_memory(problem):
    model = small(problem)
    env = TSPEnv(torch.rand(3, 9, 2), torch.tensor([0, 1, 2])) if problem == "tsp" else cvrp_env()
    result = rollout(model, env, precision="bf16")
    assert result.log_prob.dtype == torch.float32
    result.log_prob.sum().backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(g.dtype == torch.float32 and torch.isfinite(g).all() for g in grads)
    with pytest.raises(ValueError):
        rollout(model, cvrp_env() if problem == "cvrp" else env, precision="fp16")


def test_grad_from_replays_the_prefix_without_gradient_and_counts_the_suffix():
    model = small("tsp")
    locs = torch.rand(2, 8, 2)
    full = rollout(model, TSPEnv(locs, torch.tensor([0, 3])))
    assert full.decisions.tolist() == [7, 7]
    suffix = rollout(model, TSPEnv(locs, torch.tensor([0, 3])), replay=full.actions, grad_from=4)
    assert torch.equal(suffix.actions, full.actions) and suffix.decisions.tolist() == [3, 3]
    # the suffix sums the last decisions: dropping one more step removes a log-probability <= 0
    sums = [rollout(model, TSPEnv(locs, torch.tensor([0, 3])), replay=full.actions,
                    grad_from=s).log_prob for s in range(8)]
    torch.testing.assert_close(sums[0], full.log_prob)
    torch.testing.assert_close(sums[4], suffix.log_prob)
    assert all(bool((a <= b + 1e-6).all()) for a, b in zip(sums, sums[1:]))
    assert not sums[7].requires_grad and torch.equal(sums[7], torch.zeros(2))
    suffix.log_prob.sum().backward()
    assert model.fuse_cand.weight.grad is not None


def teacher_forced_steps(model, locs, tour, **kw) -> list[float]:
    """The label's log-probability at every decision of a teacher-forced rollout."""
    steps = []

    def keep(t, obs, log_p, choice, memory):
        steps.append(log_p.gather(1, choice[:, None])[:, 0])

    rollout(model, TSPEnv(locs, tour[:, 0], kw.pop("candidates", None)), replay=tour,
            trace=keep, **kw)
    return steps


@pytest.mark.parametrize("start, end", [(0, 3), (2, 6), (5, 9)])
def test_a_window_sums_its_slice_of_the_teacher_forced_decisions_and_stops(start, end):
    model = small("tsp")
    locs = torch.rand(2, 10, 2, generator=torch.Generator().manual_seed(start))
    tour = torch.stack([torch.randperm(10, generator=torch.Generator().manual_seed(s))
                        for s in (1, 2)])
    steps = teacher_forced_steps(model, locs, tour)
    window = rollout(model, TSPEnv(locs, tour[:, 0]), replay=tour, grad_from=start, until=end)
    torch.testing.assert_close(window.log_prob, torch.stack(steps[start:end]).sum(0))
    assert window.decisions.tolist() == [end - start] * 2 and window.outside.tolist() == [0, 0]
    assert torch.equal(window.actions, tour[:, :end + 1])  # stopped after the window
    window.log_prob.sum().backward()
    assert model.fuse_cand.weight.grad is not None


def test_a_label_node_outside_the_candidates_is_visited_but_not_trained_on():
    """K = 2 nearest: a tour that jumps across the square leaves the candidate set; those
    decisions are counted in ``outside``, the others are the full rollout's."""
    from routecli.envs.base import CandidateSets

    model = small("tsp")
    locs = torch.rand(2, 12, 2, generator=torch.Generator().manual_seed(0))
    tour = torch.stack([torch.randperm(12, generator=torch.Generator().manual_seed(s))
                        for s in (3, 4)])
    sets = CandidateSets(locs.double().numpy(), k=2)
    inside = []

    def keep(t, obs, log_p, choice, memory):
        inside.append((obs.nodes[:, 2:] == tour[:, t, None]).any(1))

    result = rollout(model, TSPEnv(locs, tour[:, 0], sets), replay=tour, trace=keep)
    inside = torch.stack(inside, 1)  # [B, 11]
    assert torch.equal(result.actions, tour)  # the label is followed throughout
    assert result.outside.tolist() == (~inside).sum(1).tolist()
    assert int(result.outside.sum()) > 0 and torch.equal(result.decisions, inside.sum(1))
    steps = torch.stack(teacher_forced_steps(model, locs, tour,
                                             candidates=CandidateSets(locs.double().numpy(), 2)), 1)
    torch.testing.assert_close(result.log_prob, steps.where(inside, 0.0).sum(1))
