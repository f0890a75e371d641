"""The DACT-style backbone: any registered PE drops in and nothing else changes."""

from __future__ import annotations

import pytest
import torch

from routecli.improve.env import Env, initial_orders
from routecli.improve.model import DACT, DACTConfig, load_model, parse_pe, to_checkpoint
from routecli.pe.registry import PE_REGISTRY, UnknownPEError
from routecli.train.checkpoint import save

from .conftest import instances, random_walk

SMALL = {"embed_dim": 16, "num_heads": 4, "num_layers": 1, "ff_dim": 16, "pe_dim": 8}


def small(pe: str, problem: str = "cvrp", seed: int = 0) -> DACT:
    torch.manual_seed(seed)
    return DACT(DACTConfig(problem=problem, pe=pe, **SMALL)).eval()


def observation(problem: str = "cvrp", seed: int = 0, walk: int = 10):
    data, _ = instances(problem, 13 if problem == "pdtsp" else 12, 3, seed=seed)
    return Env(data, random_walk(data, walk, seed=seed) if walk else
               initial_orders(data, torch.Generator().manual_seed(seed))).observe()


@pytest.mark.parametrize("pe", sorted(PE_REGISTRY))
def test_every_registered_pe_drops_in(pe):
    obs = observation()
    decision = small(pe)(obs, generator=torch.Generator().manual_seed(0))
    assert small(pe, "vrptw")(observation("vrptw"), generator=torch.Generator()).value.shape == (3,)
    rows = torch.arange(3)
    op, u, v = decision.action.unbind(1)
    assert obs.allowed is not None and obs.allowed[rows, op, u, v].all()
    assert torch.isfinite(decision.log_prob).all() and torch.isfinite(decision.value).all()


def outside_the_pe(model: DACT) -> dict[str, tuple[int, ...]]:
    return {name: tuple(p.shape) for name, p in model.named_parameters()
            if not name.startswith("positional.pe.")}


def test_swapping_the_pe_changes_nothing_else():
    reference = outside_the_pe(small("nope"))
    specs = [*PE_REGISTRY, "n2s", "ipe_inv_xpe:xpe_aggregate=median"]
    for pe in specs:
        assert outside_the_pe(small(pe)) == reference, pe
    full = DACT(DACTConfig(pe="nope"))
    for pe in ("ipe_xpe", "rope", "spd", "ape"):
        other = DACT(DACTConfig(pe=pe))
        assert outside_the_pe(other) == outside_the_pe(full)
        assert sum(p.numel() for n, p in other.named_parameters()
                   if not n.startswith("positional.pe.")) == sum(
                       p.numel() for p in full.parameters())


@pytest.mark.parametrize("pe", ["nope", "ipe_xpe", "alibi", "rope"])
def test_the_solution_reaches_the_policy_only_through_the_pe(pe):
    """Two tours of the same instances: NoPE scores every move alike, a PE does not."""
    first, second = observation(walk=0), observation(walk=25)
    model = small(pe)
    scores = [model.decoder(*model.encode(obs)) for obs in (first, second)]
    same = torch.allclose(scores[0], scores[1], atol=1e-6)
    assert same == (pe == "nope")


def test_scoring_a_sampled_move_gives_its_sampling_probability():
    obs = observation("pdtsp")
    model = small("ipe_xpe", "pdtsp")
    decision = model(obs, generator=torch.Generator().manual_seed(1))
    again = model(obs, action=decision.action)
    assert torch.allclose(decision.log_prob, again.log_prob, atol=1e-6)
    assert (decision.entropy > 0).all()


def test_masked_moves_are_never_sampled():
    obs = observation()
    model = small("ipe_inv_xpe")
    generator = torch.Generator().manual_seed(0)
    for _ in range(20):
        op, u, v = model(obs, generator=generator).action.unbind(1)
        assert obs.allowed is not None and obs.allowed[torch.arange(3), op, u, v].all()


def test_pe_specs_parse_options_and_aliases():
    assert parse_pe("IPE+XPE") == ("ipe_xpe", {})
    assert parse_pe("n2s") == ("dact", {})
    assert parse_pe("ipe_inv_xpe:xpe_aggregate=circular,xpe_k=3") == (
        "ipe_inv_xpe", {"xpe_aggregate": "circular", "xpe_k": 3})
    with pytest.raises(UnknownPEError):
        parse_pe("posenc")
    with pytest.raises(ValueError, match="key=value"):
        parse_pe("ipe:direction_aware")


def test_checkpoint_round_trip(tmp_path):
    model = small("spd")
    path = save(to_checkpoint(model, {"note": "test"}), tmp_path / "dact.pt")
    loaded = load_model(path)
    obs = observation()
    assert torch.allclose(model.decoder(*model.encode(obs)), loaded.decoder(*loaded.encode(obs)))
    assert loaded.config == model.config


def test_one_seed_gives_every_pe_the_same_initial_weights_outside_the_pe():
    reference = {n: p for n, p in small("nope", seed=3).named_parameters()}
    for pe in ("ape", "dact", "rpe", "spd", "ipe_inv_xpe"):
        for name, p in small(pe, seed=3).named_parameters():
            if not name.startswith("positional.pe."):
                assert torch.equal(p, reference[name]), (pe, name)
