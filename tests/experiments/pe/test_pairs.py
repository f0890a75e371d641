"""Running the (PE, seed) pairs of a comparison run folder: pairs another process holds are left
to it, two processes divide the pairs, a run killed mid-row resumes."""

from __future__ import annotations

from routecli.atomic import claim
from routecli.experiments.pe.pairs import SLUG_LIMIT, finished, prepare, run, slug
from routecli.experiments.pe.protocol import make_protocol
from routecli.results import read_csv


def test_pairs_another_process_holds_are_left_to_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    protocol = make_protocol("cvrp", 8, "dact", "smoke:eval_steps=5", test_size=4)
    with claim(out / "models" / "nope-s0.lock") as held:  # as another process would
        assert held
        run(protocol, ["nope", "xpe"], [0], out, log=lambda line: None, progress=False)
    assert finished(out) == {("xpe", 0)}
    run(protocol, ["nope", "xpe"], [0], out, log=lambda line: None, progress=False)
    assert finished(out) == {("xpe", 0), ("nope", 0)}
    with open(out / "rows.csv") as handle:
        assert handle.read().count("pe,seed") == 1  # one header


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
    assert [c[:2] for c in costs if c[0] == "nope"] == [("nope", str(k)) for k in range(4)]
    assert costs[4:6] == [("nope", "0", "1.0"), ("nope", "1", "2.0")]  # kept, not repeated


SHARE = """
import sys, time
from pathlib import Path
import torch
from routecli.experiments.pe import pairs
from routecli.experiments.pe.protocol import make_protocol

out, me, other = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
real, ran = pairs.run_pair, []

def run_pair(protocol, pe, seed, *args, **kwargs):
    ran.append(pe)
    if len(ran) == 1:  # hold the first pair until the other process runs one too
        (out / me).touch()
        deadline = time.time() + 120
        while not (out / other).exists() and time.time() < deadline:
            time.sleep(0.05)
    real(protocol, pe, seed, *args, **kwargs)

pairs.run_pair = run_pair
torch.set_num_threads(1)
protocol = make_protocol("cvrp", 8, "dact", "smoke:eval_steps=5", test_size=4)
pairs.run(protocol, ["nope", "xpe"], [0], out, log=lambda line: None, progress=False)
print(",".join(ran))
"""


def test_two_processes_divide_the_pairs_of_a_folder_through_claims(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys
    from pathlib import Path

    import routecli

    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    protocol = make_protocol("cvrp", 8, "dact", "smoke:eval_steps=5", test_size=4)
    prepare(protocol, out, progress=False)  # the test set and references, once
    env = {**os.environ, "PYTHONPATH": str(Path(routecli.__file__).parents[1]),
           "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", SHARE, str(out), me, other], env=env,
                              stdout=subprocess.PIPE, text=True)
             for me, other in (("a", "b"), ("b", "a"))]
    ran = [proc.communicate(timeout=300)[0].split() for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    assert sorted(sum(ran, [])) == ["nope", "xpe"] and all(ran)  # one pair each
    assert sorted((r["pe"], r["seed"]) for r in read_csv(out / "rows.csv")) == \
        [("nope", "0"), ("xpe", "0")]
    assert len(read_csv(out / "untrained.csv")) == 1


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
