"""NDS deconstruction policy: PE plumbing, masking, valid removal sets, checkpoints, symmetry."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from routecli import generate
from routecli.generate import batch_instances
from routecli.nds.features import node_features, removable, solution_batch
from routecli.nds.policy import (
    NDSConfig,
    NDSPolicy,
    default_pe,
    load_policy,
    sample_latent,
    to_checkpoint,
    unit_distance,
)
from routecli.nds.removal import LearnedRemoval
from routecli.pe.registry import PE_REGISTRY
from routecli.problems import Routes
from routecli.problems.geometry import augment8
from routecli.search.asa import initial_solution
from routecli.search.repair import drop_unprofitable
from routecli.search.state import ROUTE, SearchProblem, from_routes
from routecli.train.checkpoint import CheckpointError, save

SMALL = {"embed_dim": 32, "num_heads": 4, "num_layers": 1, "ff_dim": 64, "pe_dim": 16,
         "poly_dim": 32}


def small_policy(problem: str = "cvrp", pe: str | None = None, seed: int = 0) -> NDSPolicy:
    torch.manual_seed(seed)
    return NDSPolicy(NDSConfig(problem=problem, pe=pe or default_pe(problem), **SMALL)).eval()


def search_problem(problem: str, n: int = 30, seed: int = 0) -> tuple[SearchProblem, object]:
    raw = getattr(generate, problem)(1, n, seed, capacity=None)
    p = SearchProblem.from_instance(batch_instances(problem, raw)[0])
    state = initial_solution(p)
    if p.optional:
        drop_unprofitable(p.dist, p.node_data, p.capacity, p.timed, *state.arrays())
    return p, state


def inputs(p, state, copies=1):
    """Features, route batch, removable mask and unit distances of ``copies`` images."""
    coords = augment8(p.unit_coords)[:copies]
    return node_features(p, state, coords), solution_batch(p, state, coords), \
        removable(p, state, copies), unit_distance(p.unit_coords)[None]


def test_default_pe_follows_the_paper_direction_rule():
    assert default_pe("cvrp") == "ipe_inv_xpe"
    assert default_pe("vrptw") == "ipe_xpe"
    assert default_pe("pcvrp") == "ipe_xpe"
    with pytest.raises(ValueError):
        default_pe("tsp")


@pytest.mark.parametrize("pe", sorted(PE_REGISTRY))
def test_every_registered_pe_runs_through_the_policy(pe):
    p, state = search_problem("cvrp", n=20)
    model = small_policy(pe=pe)
    feats, batch, allowed, dist = inputs(p, state, copies=2)
    latent = sample_latent(2, 3, model.config.latent_dim, torch.Generator().manual_seed(0))
    actions, logp = model(feats, batch, allowed, latent, steps=5,
                          generator=torch.Generator().manual_seed(1), distance=dist)
    assert actions.shape == (2, 3, 5) and logp.shape == (2, 3)
    assert torch.isfinite(logp).all() and (logp < 0).all()
    assert allowed.gather(1, actions.view(2, -1)).all()


def test_the_positional_encoding_reaches_the_node_embeddings():
    """Same nodes, different route structure: with a PE the embeddings differ; the PE is what
    carries the solution beyond the message-passing neighbours."""
    p, state = search_problem("cvrp", n=20)
    model = small_policy()
    feats, batch, _, _ = inputs(p, state)
    base = model.encode(feats, batch)
    model.encoder.pe = PE_REGISTRY["nope"].build(dim=0, num_heads=4)
    model.encoder.project[0] = torch.nn.Linear(feats.shape[-1], 32)
    assert not torch.allclose(base, model.encode(feats, batch))


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_learned_removals_are_valid(problem):
    p, state = search_problem(problem, n=40, seed=3)
    policy = LearnedRemoval(small_policy(problem))
    out = policy.propose(p, state, np.random.default_rng(0), k=7, rollouts=20)
    served = set(state.served().tolist())
    assert out.shape == (20, 7)
    for row in out:
        assert len(set(row.tolist())) == 7  # no customer twice in one rollout
        assert 0 not in row  # never the depot
        assert set(row.tolist()) <= served  # unserved PCVRP customers are masked


def test_pcvrp_unserved_customers_are_never_proposed():
    p, state = search_problem("pcvrp", n=40, seed=3)
    unserved = np.flatnonzero(state.nodes[1:, ROUTE] < 0) + 1
    assert len(unserved) > 0  # the PCVRP generator makes about half unattractive
    out = LearnedRemoval(small_policy("pcvrp")).propose(p, state, np.random.default_rng(1),
                                                         k=10, rollouts=32)
    assert not np.isin(out, unserved).any()


def test_budget_is_capped_by_the_number_of_served_customers():
    p, _ = search_problem("cvrp", n=12)
    state = from_routes(p, Routes([np.array([3, 5]), np.array([1, 2, 4, 6, 7, 8, 9, 10, 11, 12])]))
    out = LearnedRemoval(small_policy()).propose(p, state, np.random.default_rng(0), 30, 8)
    assert out.shape == (8, 12)
    assert all(sorted(r) == list(range(1, 13)) for r in out.tolist())


def test_masked_choices_are_never_sampled_and_scores_match_sampling():
    p, state = search_problem("cvrp", n=25)
    model = small_policy()
    feats, batch, allowed, dist = inputs(p, state, copies=1)
    allowed = allowed.clone()
    allowed[0, 1:13] = False  # forbid half of the customers
    latent = sample_latent(1, 16, model.config.latent_dim, torch.Generator().manual_seed(0))
    with torch.no_grad():
        actions, logp = model(feats, batch, allowed, latent, 6,
                              torch.Generator().manual_seed(2), distance=dist)
        _, rescored = model(feats, batch, allowed, latent, 6, actions=actions, distance=dist)
    assert (actions >= 13).all()
    torch.testing.assert_close(logp, rescored)


def test_the_rollout_latent_changes_the_distribution():
    p, state = search_problem("cvrp", n=25)
    model = small_policy()
    for param in model.poly.parameters():  # an untrained head is near zero; make it matter
        torch.nn.init.normal_(param, std=0.5)
    feats, batch, allowed, dist = inputs(p, state)
    actions = torch.arange(1, 4)[None, None].expand(1, 2, 3)
    latent = torch.tensor([[[0.0] * 10, [1.0] * 10]])
    with torch.no_grad():
        _, logp = model(feats, batch, allowed, latent, 3, actions=actions, distance=dist)
    assert not torch.isclose(logp[0, 0], logp[0, 1])


def test_cvrp_policy_cannot_tell_a_route_from_its_reversal():
    """Direction-invariant IPE + symmetric message passing: reversing every route leaves every
    CVRP node embedding unchanged (PE paper Section 4.1, D2)."""
    p, _ = search_problem("cvrp", n=20, seed=4)
    routes = [np.arange(1, 8), np.arange(8, 15), np.arange(15, 21)]
    forward = from_routes(p, Routes(routes))
    backward = from_routes(p, Routes([r[::-1] for r in routes]))
    model = small_policy("cvrp")
    with torch.no_grad():
        a = model.encode(*inputs(p, forward)[:2])
        b = model.encode(*inputs(p, backward)[:2])
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    directed = small_policy("cvrp", pe="ipe_xpe")
    with torch.no_grad():
        c = directed.encode(*inputs(p, forward)[:2])
        d = directed.encode(*inputs(p, backward)[:2])
    assert not torch.allclose(c, d, atol=1e-4)


def test_checkpoint_round_trip(tmp_path):
    p, state = search_problem("vrptw", n=20)
    model = small_policy("vrptw", pe="rope", seed=5)
    path = tmp_path / "nds.pt"
    save(to_checkpoint(model, {"steps": 3}), path)
    loaded = load_policy(path)
    assert loaded.config == model.config
    data = torch.load(path, weights_only=True)
    assert data["meta"] == {"steps": 3}
    feats, batch, allowed, dist = inputs(p, state, copies=2)
    latent = sample_latent(2, 4, 10, torch.Generator().manual_seed(0))
    with torch.no_grad():
        a = model(feats, batch, allowed, latent, 4, torch.Generator().manual_seed(9),
                  distance=dist)
        b = loaded(feats, batch, allowed, latent, 4, torch.Generator().manual_seed(9),
                   distance=dist)
    assert torch.equal(a[0], b[0])
    torch.testing.assert_close(a[1], b[1])


def test_a_distance_biased_policy_needs_the_distances():
    p, state = search_problem("cvrp", n=20)
    feats, batch, allowed, _ = inputs(p, state)
    latent = sample_latent(1, 2, 10)
    with pytest.raises(ValueError, match="distance"):
        small_policy()(feats, batch, allowed, latent, 3)


def test_the_distance_bias_keeps_removals_together():
    """At initialisation the bias pulls every pick towards the first one: the customers of a
    proposal lie much closer to its first pick than those of the unbiased pointer."""
    p, state = search_problem("cvrp", n=100, seed=2)
    dist = unit_distance(p.unit_coords)

    def spread(model: NDSPolicy) -> float:
        out = LearnedRemoval(model).propose(p, state, np.random.default_rng(0), k=10,
                                            rollouts=64)
        return float(dist[out[:, :1], out[:, 1:]].mean())

    biased = small_policy(seed=1)
    unbiased = NDSPolicy(NDSConfig(**{**biased.config.to_dict(), "distance_bias": False}))
    unbiased.load_state_dict(biased.state_dict(), strict=False)
    assert spread(biased) < 0.6 * spread(unbiased.eval())


def test_unit_distances_are_the_same_on_every_symmetric_image():
    p, _ = search_problem("cvrp", n=20)
    images = unit_distance(augment8(p.unit_coords))  # [8, V, V]
    torch.testing.assert_close(images, images[:1].expand_as(images), atol=1e-6, rtol=0)


def test_load_rejects_other_checkpoints(tmp_path):
    path = tmp_path / "other.pt"
    save({"kind": "miloop", "config": {}, "model": {}}, path)
    with pytest.raises(CheckpointError, match="a miloop checkpoint, not a nds one"):
        load_policy(path)


def test_features_are_unit_free():
    """Scaling every coordinate (and time) by 100 leaves the policy's input unchanged."""
    raw = generate.vrptw(1, 20, 0, capacity=None)
    big = {**raw, "locs": raw["locs"] * 100, "ready": raw["ready"] * 100,
           "due": raw["due"] * 100, "service": raw["service"] * 100}
    feats = []
    for data in (raw, big):
        p = SearchProblem.from_instance(batch_instances("vrptw", data)[0])
        feats.append(node_features(p, initial_solution(p), p.unit_coords[None]))
    torch.testing.assert_close(feats[0], feats[1], atol=1e-5, rtol=1e-4)


def test_policy_reads_the_current_problem_not_a_cached_one():
    policy = LearnedRemoval(small_policy())
    first, _ = search_problem("cvrp", n=20, seed=1)
    np.testing.assert_array_equal(policy.images(first), augment8(first.unit_coords))
    second, _ = search_problem("cvrp", n=20, seed=2)
    np.testing.assert_array_equal(policy.images(second), augment8(second.unit_coords))
    assert LearnedRemoval(small_policy(), augment=False).images(second).shape == (1, 21, 2)


def test_the_encoding_is_reused_only_while_the_solution_is_unchanged():
    p, state = search_problem("cvrp", n=30, seed=4)
    cached = LearnedRemoval(small_policy())
    fresh_policy = small_policy()
    first = cached.propose(p, state, np.random.default_rng(5), k=6, rollouts=16)
    again = cached.propose(p, state, np.random.default_rng(6), k=6, rollouts=16)
    assert cached.encodings == 1
    fresh = LearnedRemoval(fresh_policy).propose(p, state, np.random.default_rng(6), 6, 16)
    np.testing.assert_array_equal(again, fresh)  # reuse changes nothing but the cost
    assert first.shape == again.shape
    routes = state.to_routes().routes
    moved = Routes([np.concatenate([routes[0], routes[1]]), *routes[2:]]) \
        if len(routes) > 1 else Routes([routes[0][::-1]])
    cached.propose(p, from_routes(p, moved), np.random.default_rng(6), k=6, rollouts=16)
    assert cached.encodings == 2


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_bf16_proposals_are_valid_removal_sets_from_nearly_the_same_encoding(problem):
    p, state = search_problem(problem, n=40, seed=3)
    model = small_policy(problem)
    half, full = LearnedRemoval(model, precision="bf16"), LearnedRemoval(model)
    out = half.propose(p, state, np.random.default_rng(0), k=7, rollouts=24)
    served = set(state.served().tolist())
    assert out.shape == (24, 7)
    for row in out:
        assert len(set(row.tolist())) == 7 and set(row.tolist()) <= served
    emb = half.encode(p, state)
    assert emb.dtype == torch.float32  # the decoder reads fp32
    torch.testing.assert_close(emb, full.encode(p, state), atol=0.1, rtol=0.05)
    assert not torch.equal(emb, full.encode(p, state))  # bf16 did run


def test_the_paper_proposals_are_the_policy_samples_on_the_eight_images():
    """The published method: each call encodes the solution in fp32 on the 8 symmetric images
    and samples rollouts / 8 sets per image, nothing else in between."""
    p, state = search_problem("cvrp", n=30, seed=2)
    model = small_policy()
    out = LearnedRemoval(model).propose(p, state, np.random.default_rng(4), k=6, rollouts=16)
    generator = torch.Generator().manual_seed(int(np.random.default_rng(4).integers(2**62)))
    feats, batch, allowed, dist = inputs(p, state, copies=8)
    latent = sample_latent(8, 2, model.config.latent_dim, generator)
    with torch.no_grad():
        actions, _ = model(feats, batch, allowed, latent, 6, generator, distance=dist)
    np.testing.assert_array_equal(out, actions.reshape(16, 6).numpy())
