import csv
import json

import pytest

from routecli.generate import batch_instances, cvrp
from routecli.results import (
    COLUMNS,
    Provenance,
    ResultLog,
    ResultRow,
    ResultStoreError,
    command_line,
    portable_path,
)
from routecli.solvers import make_settings, make_solver, run
from routecli.stop import MaxIterations


def one_row(tmp_path):
    instance = batch_instances("cvrp", cvrp(1, 12, 0))[0]
    settings = make_settings("sisr", rollouts=2)
    stop = MaxIterations(50)
    result = run(make_solver("sisr", settings), instance, stop=stop, bks=1.0)
    return ResultRow.of(result, set_name="synthetic", file=None, solver="sisr",
                        settings=settings, seed=0, stop=stop,
                        provenance=Provenance("abc", "2026-12-02T00:00:00Z", "x"))


def test_a_row_records_settings_stop_and_gap_in_percent(tmp_path):
    row = one_row(tmp_path)
    assert json.loads(row.settings)["rollouts"] == 2
    assert row.iterations == 50 and row.time_limit is None
    assert row.gap_pct == pytest.approx(100 * (row.cost - 1.0))


def test_log_appends_resumes_and_round_trips(tmp_path):
    path = tmp_path / "r.csv"
    log = ResultLog(path, extra=["offset"])
    log.add_row(one_row(tmp_path), offset=3.5)
    again = ResultLog(path, extra=["offset"])
    assert again.find(instance=again.rows[0]["instance"], solver="sisr", iterations=50)
    assert again.find(solver="hgs") is None
    assert again.results()[0] == one_row(tmp_path).__class__.from_csv(again.rows[0])
    with open(path) as fh:
        assert next(csv.reader(fh)) == [*COLUMNS, "offset"]


def test_a_file_of_another_layout_is_refused(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text("instance,model,cost\nX-n101-k25,nn,30000\n")
    with pytest.raises(ResultStoreError, match="old.csv has the columns instance,model,cost"):
        ResultLog(path)


def test_paths_and_commands_carry_no_machine_prefix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.vrp").write_text("x")
    assert portable_path(tmp_path / "a" / "f.vrp") == "a/f.vrp"
    assert command_line(["/usr/local/bin/routecli", "bench", "--out", "a b"]) == \
        "routecli bench --out 'a b'"
