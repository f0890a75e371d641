"""Running the (PE, seed) pairs of a comparison run folder: pairs another process holds are left
to it."""

from __future__ import annotations

from routecli.improve.lock import boot_id
from routecli.improve.pairs import finished, run
from routecli.improve.protocol import make_protocol


def test_pairs_another_process_holds_are_left_to_it(tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    (out / "models").mkdir(parents=True)
    (out / "models" / "nope-s0.lock").write_text(f"{os.getpid()} {boot_id()}")
    protocol = make_protocol("cvrp", 8, "dact", "smoke:eval_steps=5", test_size=4)
    run(protocol, ["nope", "xpe"], [0], out, log=lambda line: None, progress=False)
    assert finished(out) == {("xpe", 0)}
    (out / "models" / "nope-s0.lock").unlink()
    run(protocol, ["nope", "xpe"], [0], out, log=lambda line: None, progress=False)
    assert finished(out) == {("xpe", 0), ("nope", 0)}
    with open(out / "rows.csv") as handle:
        assert handle.read().count("pe,seed") == 1  # one header
