"""MiLoop ablation study (MiLoop Tables 4-5): variants, protocol, summary, a tiny resumable run."""

from __future__ import annotations

import json

import pytest

from routecli.errors import OptionError
from routecli.experiments.ablation import (
    PAPER_TABLE5,
    VARIANTS,
    Evaluation,
    Protocol,
    budget_steps,
    curves,
    markdown,
    parse_variants,
    plot_curves,
    run_study,
    summarize,
    train_config,
)
from routecli.tasks import Pool


def test_each_variant_switches_its_components(tmp_path):
    protocol = Protocol()
    configs = {name: train_config(name, 1, protocol, tmp_path) for name in VARIANTS}
    assert (configs["full"].fusion, configs["full"].gated, configs["full"].memory) == (True,) * 3
    assert configs["no-update"].gated is False and configs["no-update"].fusion is True
    assert configs["no-fusion"].fusion is False and configs["no-fusion"].gated is True
    assert configs["no-memory"].memory is False and configs["no-memory"].layers == 3
    assert configs["no-memory-6"].layers == 6
    assert configs["reinforce"].loss == "reinforce" and configs["full"].loss == "dpo"
    # one stream of instances per seed, the same for every variant, and no learning-rate step
    assert len({(c.seed, str(c.curriculum[0])) for c in configs.values()}) == 1
    assert configs["full"].decay_at == 1.0 and configs["full"].val_size == protocol.train_size
    assert set(PAPER_TABLE5) == set(VARIANTS)


def test_parse_variants_and_protocol_checks():
    assert parse_variants("all") == list(VARIANTS)
    assert parse_variants("full, no-memory") == ["full", "no-memory"]
    with pytest.raises(OptionError, match="unknown variant 'no-brain'"):
        parse_variants("full,no-brain")
    with pytest.raises(OptionError, match=">= 2 rollouts"):
        Protocol(rollouts=1)
    assert json.loads(Protocol().settings("no-fusion"))["fusion"] is False


def rows(variant, seed, size, gaps):
    return [{"solver": variant, "seed": str(seed), "n": str(size), "instance": str(k),
             "cost": str(10 + g), "gap_pct": str(g)} for k, g in enumerate(gaps)]


def test_summary_tests_every_variant_against_full_with_one_correction_over_the_table():
    spread = [0.0, 0.1, -0.1, 0.05, -0.05]
    data = []
    for seed, d in enumerate(spread):
        data += rows("full", seed, 20, [1.0 + d, 3.0 + d])
        data += rows("no-memory", seed, 20, [5.0 + d, 5.0 + d])  # 3 points worse
        data += rows("no-update", seed, 20, [1.0 - d, 3.0 + d])  # the same as full
        data += rows("no-fusion", seed, 20, [5.0 + d, 5.0 + d]) if seed < 3 else []
    summary = summarize(data)
    full, ablated = summary["full"][20], summary["no-memory"][20]
    assert (full.seeds, full.gap, full.versus_full) == (5, pytest.approx(2.0), None)
    test = ablated.versus_full
    assert test.effect == pytest.approx(3.0) and test.ci_low > 0 and test.verdict == "a"
    assert summary["no-update"][20].versus_full.verdict == "not separated"
    three = summary["no-fusion"][20].versus_full  # as far from full, with three seeds
    assert three.p < 0.05 and three.verdict == "not separated"
    ps = [c.versus_full for name, cells in summary.items() for c in cells.values()
          if name != "full"]
    assert all(t.p_adjusted >= t.p for t in ps) and len(ps) == 3
    text = markdown(summary, Protocol(test_sizes=(20,), steps=1000), "python benchmarks/x.py")
    assert "| ✓ | ✓ | ✓ | 3 | DPO | full |" in text and "| × | × | × | 3 | DPO | no-memory |" in text
    assert "full better" in text and "1,000 updates each" in text and "7.82 (0.84%)" in text


def test_equal_updates_are_part_of_the_settings_only_when_set():
    assert "steps" not in json.loads(Protocol().settings("full"))
    assert json.loads(Protocol(steps=500).settings("full"))["steps"] == 500
    with pytest.raises(OptionError):
        Protocol(steps=-1)


@pytest.mark.slow
def test_a_tiny_study_trains_tests_and_resumes_on_a_pool(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    protocol = Protocol(train_size=6, batch=2, rollouts=3, cpu_minutes=0.005, chunk=1,
                        val_instances=2, test_sizes=(6, 7), test_num=2)
    stored: dict[tuple[str, int, int], Evaluation] = {}

    def is_done(name, seed, size):
        return (name, seed, size) in stored

    def record(result):
        stored[result.variant, result.seed, result.size] = result

    logs = tmp_path / "out" / "logs"
    study = (["full", "no-fusion"], [0], protocol, tmp_path / "runs", logs, is_done, record)
    run_study(*study, compile=False, log=lambda line: None, executor=Pool(2))  # a task each
    assert sorted(stored) == [("full", 0, 6), ("full", 0, 7), ("no-fusion", 0, 6),
                              ("no-fusion", 0, 7)]
    for result in stored.values():
        assert result.costs.shape == result.reference.shape == (2,)
        assert (result.gaps > -1e-6).all() and result.train_steps >= 1
        assert result.train_cpu_seconds >= 0.005 * 60
    assert (tmp_path / "runs" / "full-s0" / "last.pt").is_file()
    assert set(curves(logs)) == {"full", "no-fusion"}
    del stored["no-fusion", 0, 7]
    steps = stored["no-fusion", 0, 6].train_steps
    run_study(*study, compile=False, log=lambda line: None)  # resumes: tests the missing size
    assert len(stored) == 4 and stored["no-fusion", 0, 7].train_steps == steps
    plot_curves(logs, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_later_seeds_train_the_steps_the_first_seed_reached(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    # a CPU budget no run spends in 3 steps: seed 1 must stop at seed 0's step, not at the budget
    protocol = Protocol(train_size=6, batch=2, rollouts=3, cpu_minutes=60.0, chunk=2,
                        val_instances=2, test_sizes=(6,), test_num=2)
    logs = tmp_path / "out" / "logs"
    logs.mkdir(parents=True)
    assert budget_steps(logs, "full", 0) is None
    (logs / "full-s0.jsonl").write_text('{"event": "start", "step": 0}\n{"step": 2}\n'
                                        '{"event": "resume", "step": 2}\n{"step": 3}\n')
    assert budget_steps(logs, "full", 0) == 3
    seed0_tested = {("full", 0, 6)}
    stored: dict[tuple[str, int, int], Evaluation] = {}

    def record(result):
        stored[result.variant, result.seed, result.size] = result

    run_study(["full"], [0, 1], protocol, tmp_path / "runs", logs,
              lambda name, seed, size: (name, seed, size) in seed0_tested | set(stored), record,
              compile=False, log=lambda line: None)
    assert stored["full", 1, 6].train_steps == 3


def test_a_signal_ends_the_study_after_saving_the_run(tmp_path, monkeypatch):
    from routecli.miloop.train import Trainer
    from routecli.train.stopping import StopReason

    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    run = Trainer.run

    def signalled(self, *args, **kwargs):  # as if SIGTERM arrived during the chunk
        run(self, *args, **kwargs)
        return StopReason.INTERRUPTED

    monkeypatch.setattr(Trainer, "run", signalled)
    protocol = Protocol(train_size=6, batch=2, rollouts=3, cpu_minutes=60.0, chunk=1,
                        val_instances=2, test_sizes=(6,), test_num=2)
    stored: list[Evaluation] = []
    with pytest.raises(KeyboardInterrupt):
        run_study(["full", "no-fusion"], [0], protocol, tmp_path / "runs", tmp_path / "logs",
                  lambda name, seed, size: False, stored.append, compile=False,
                  log=lambda line: None)
    assert not stored and (tmp_path / "runs" / "full-s0" / "last.pt").is_file()
    assert not (tmp_path / "runs" / "no-fusion-s0").exists()
