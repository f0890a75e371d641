"""Running the (PE, seed) pairs of a comparison run folder as tasks: a pool runs them, a rerun
skips the finished ones, a run killed mid-row resumes."""

from __future__ import annotations

from routecli.experiments.pe.pairs import SLUG_LIMIT, baseline_store, finished, run, slug
from routecli.experiments.pe.protocol import make_protocol
from routecli.results import read_csv
from routecli.tasks import Pool


def test_pairs_run_as_tasks_of_a_pool_and_a_rerun_skips_the_finished_ones(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    protocol = make_protocol("cvrp", 8, "dact", "smoke:eval_steps=5", test_size=4)
    run(protocol, ["xpe"], [0], out, log=lambda line: None, progress=False)
    lines = []
    run(protocol, ["nope", "xpe"], [0], out, log=lines.append, progress=False,
        executor=Pool(2))
    assert finished(out) == {("xpe", 0), ("nope", 0)}
    assert [line.split(":")[0] for line in lines] == ["nope seed 0"]  # xpe was done
    with open(out / "rows.csv") as handle:
        assert handle.read().count("pe,seed") == 1  # one header
    assert len(read_csv(out / "untrained.csv")) == 1
    assert sorted(p.name for p in (out / "models").glob("*.pt")) == ["nope-s0.pt", "xpe-s0.pt"]


def test_a_run_killed_in_the_middle_of_its_rows_resumes_without_a_torn_or_repeated_row(
        tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    protocol = make_protocol("cvrp", 8, "dact", "smoke:eval_steps=5", test_size=4)
    run(protocol, ["xpe"], [0], out, log=lambda line: None, progress=False)
    # killed while appending nope's costs (two of four written, the third torn), then its row
    with open(out / "costs.csv", "a") as handle:
        handle.write("nope,0,0,1.0\nnope,0,1,2.0\nnope,0,2,3.")
    with open(out / "rows.csv", "a") as handle:
        handle.write("abc,2024-01-01T00:00:00Z,routecli compare-pe,nope,0,10.")
    assert finished(out) == {("xpe", 0)}  # the torn row reads as not run
    run(protocol, ["nope", "xpe"], [0], out, log=lambda line: None, progress=False)
    rows = read_csv(out / "rows.csv")
    assert [(r["pe"], r["seed"]) for r in rows] == [("xpe", "0"), ("nope", "0")]
    assert all(r["commit"] and r["date"] and r["command"] for r in rows)  # provenance
    costs = [(r["pe"], r["instance"], r["cost"]) for r in read_csv(out / "costs.csv")]
    nope = [c for c in costs if c[0] == "nope"]
    assert [c[:2] for c in nope] == [("nope", str(k)) for k in range(4)]
    assert nope[:2] == [("nope", "0", "1.0"), ("nope", "1", "2.0")]  # kept, not repeated


def test_the_baselines_are_evaluated_once_per_folder_from_the_comparisons_tours(tmp_path,
                                                                                monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    protocol = make_protocol("cvrp", 8, "dact", "smoke:eval_steps=30", test_size=4)
    run(protocol, ["nope"], [0], out, log=lambda line: None, progress=False)
    rows = {r["row"]: r for r in baseline_store(out).rows}
    assert list(rows) == ["random", "teacher", "epsilon-teacher"]
    gap = {name: float(r["gap_pct"]) for name, r in rows.items()}
    assert -1e-3 <= gap["teacher"] < gap["random"] and gap["epsilon-teacher"] < gap["random"]
    assert float(rows["epsilon-teacher"]["epsilon"]) == 0.25
    costs = [r for r in read_csv(out / "costs.csv") if r["pe"] == "baseline:teacher"]
    assert len(costs) == 4
    run(protocol, ["nope"], [0], out, log=lambda line: None, progress=False)
    assert len(baseline_store(out).rows) == 3


def test_a_long_list_of_encodings_names_a_file_the_file_system_accepts(tmp_path):
    short = "ipe_inv_xpe:xpe_aggregate=mean"
    assert slug(short) == "ipe-inv-xpe-xpe-aggregate-mean"
    many = ",".join(f"ipe_inv_xpe:xpe_aggregate={a}"
                    for a in 2 * ("mean", "circular", "demand", "median", "midpoint", "mean"))
    assert len(many) > 255
    names = {slug(many), slug(many.replace("mean", "median", 1)), slug(many + ",ipe_inv_index")}
    assert len(names) == 3
    for name in names:
        assert len(name) <= SLUG_LIMIT
        (tmp_path / f"summary-{name}.md").write_text("")
    assert slug(many) == slug(many)
