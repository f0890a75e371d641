"""The comparison's protocol: budgets (presets, the N2S paper recipe, overrides), its checks,
the reference PE, the seeded backbone it builds."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from routecli.errors import OptionError
from routecli.experiments.pe.protocol import (
    build,
    load,
    make_protocol,
    parse_budget,
    save_model,
    versus_pe,
)
from routecli.improve.imitation import ImitationConfig
from tests.improve.test_model import SMALL


def test_budgets_parse_with_overrides():
    schedule, steps = parse_budget("cpu:epochs=7,eval_steps=50,lr_actor=0.002", "dact")
    assert schedule.epochs == 7 and steps == 50 and schedule.lr_actor == 0.002
    paper, paper_steps = parse_budget("paper", "n2s")
    assert paper.t_train == 250 and paper.n_step == 5 and paper_steps == 3000
    with pytest.raises(OptionError):
        parse_budget("huge", "dact")
    with pytest.raises(OptionError):
        parse_budget("cpu:warp=9", "dact")


def test_the_imitation_budget_is_offline_imitation_with_its_overrides():
    schedule, steps = parse_budget("imitation:updates=40,target=move,eval_steps=20", "dact")
    assert isinstance(schedule, ImitationConfig) and steps == 20
    assert (schedule.updates, schedule.target) == (40, "move")
    protocol = make_protocol("cvrp", 10, "dact", "imitation:updates=40")
    assert protocol.schedule == ImitationConfig(updates=40)  # as stored in protocol.json
    for bad in ("imitation:epochs=3", "imitation:target=best", "imitation:updates=x",
                "imitation:updates=0", "cpu:eval_steps=ten"):
        with pytest.raises(OptionError):
            parse_budget(bad, "dact")
    assert make_protocol("pdtsp", 11, "n2s", "imitation").schedule == ImitationConfig()


def test_protocols_are_checked_and_name_the_pe_every_other_is_compared_with():
    for args in (("tsp", 20, "dact"), ("cvrp", 20, "attention"), ("cvrp", 20, "n2s")):
        with pytest.raises(OptionError):
            make_protocol(*args, "smoke")
    with pytest.raises(OptionError, match="test-size"):
        make_protocol("cvrp", 20, "dact", "smoke", test_size=0)
    # the paper's IPE+XPE, with the formula it printed
    assert versus_pe(make_protocol("cvrp", 20, "dact", "smoke")) == "ipe_inv_xpe:schedule=geometric"
    assert versus_pe(make_protocol("vrptw", 20, "dact", "smoke")) == "ipe_xpe:schedule=geometric"
    assert versus_pe(make_protocol("pdtsp", 21, "n2s", "smoke")) == "ipe_xpe:schedule=geometric"


def test_a_seed_builds_the_same_backbone_and_a_saved_one_loads(tmp_path):
    protocol = replace(make_protocol("cvrp", 8, "dact", "smoke"), model=SMALL)
    first, again = build(protocol, "xpe", 3), build(protocol, "xpe", 3)
    other = build(protocol, "xpe", 4)
    weights = first.state_dict()
    assert all(torch.equal(w, again.state_dict()[k]) for k, w in weights.items())
    assert not all(torch.equal(w, other.state_dict()[k]) for k, w in weights.items())
    save_model(first, tmp_path / "xpe-s3.pt", {"pe": "xpe", "seed": 3})
    loaded = load(protocol, tmp_path / "xpe-s3.pt")
    assert all(torch.equal(w, loaded.state_dict()[k]) for k, w in weights.items())


def test_capacity_is_part_of_the_protocol_and_old_folders_read_as_the_paper_rule():
    import json
    from dataclasses import asdict

    import pytest

    from routecli.errors import OptionError
    from routecli.experiments.pe.protocol import make_protocol, same_protocol

    paper_rule = make_protocol("cvrp", 20, "dact", "smoke")
    low = make_protocol("cvrp", 20, "dact", "smoke", capacity=15)
    stored = json.loads(json.dumps(asdict(paper_rule)))
    del stored["capacity"]  # a folder written before the field existed
    assert same_protocol(stored, paper_rule) and not same_protocol(stored, low)
    for bad in (5.0, float("nan"), float("inf")):
        with pytest.raises(OptionError, match="--capacity"):
            make_protocol("cvrp", 20, "dact", "smoke", capacity=bad)
    with pytest.raises(OptionError, match="PDTSP"):
        make_protocol("pdtsp", 11, "n2s", "smoke", capacity=20)
