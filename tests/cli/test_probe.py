"""``routecli probe`` end to end on a tiny set."""

from __future__ import annotations

import json

from routecli.cli.app import main


def test_probe_writes_one_row_per_encoding_with_the_paper_values(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "probe.json"
    code = main(["probe", "--pe", "ipe-inv,sin,alibi,rope,nope", "--num", "3", "--pairs", "200",
                 "--ref-budget", "0.02", "--jobs", "1", "--dim", "32", "--out", str(out)])
    captured = capsys.readouterr()
    text = captured.out
    assert code == 0 and "0.934" in text  # paper's IPE D1 printed beside ours
    progress = captured.err.splitlines()  # a log, not a terminal: a line per encoding
    assert len(progress) == 7 and progress[0].startswith("probe: ipe_inv done (1 of 7, ")
    assert progress[-1].startswith("probe: ref_cyclic_arc done (7 of 7, ")
    data = json.loads(out.read_text())
    rows = {r["pe"]: r for r in data["rows"]}
    assert list(rows) == ["ipe_inv", "sin", "alibi", "rope", "nope", "ref_index_gap",
                          "ref_cyclic_arc"]
    assert rows["ref_index_gap"]["kind"] == "reference"
    assert rows["ipe_inv"]["D1_paper"] == 0.934 and rows["rope"]["kind"] == "rotary"
    assert rows["nope"]["D1"] is None  # undefined for a constant encoding
    assert -1 <= rows["sin"]["D1"] <= 1 and rows["alibi"]["D3"] == rows["alibi"]["D3"]
    assert data["pairs_per_solution"] == 200 and data["set"] == "cvrp-100"


def test_probe_uses_the_papers_printed_ipe_unless_told_otherwise(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    results = {}
    for schedule in ("integer", "geometric"):
        out = tmp_path / f"{schedule}.json"
        assert main(["probe", "--pe", "ipe_inv", "--num", "2", "--pairs", "300", "--ref-budget",
                     "0.05", "--jobs", "1", "--dim", "32", "--ipe-schedule", schedule,
                     "--out", str(out)]) == 0
        results[schedule] = json.loads(out.read_text())["rows"][0]["D1"]
    assert results["integer"] != results["geometric"]
    out = tmp_path / "default.json"
    assert main(["probe", "--pe", "ipe_inv", "--num", "2", "--pairs", "300", "--ref-budget",
                 "0.05", "--jobs", "1", "--dim", "32", "--out", str(out)]) == 0
    default = json.loads(out.read_text())
    assert default["ipe_schedule"] == "geometric"  # the paper's printed formula by default
    assert default["rows"][0]["D1"] == results["geometric"]


def test_encoding_names_stay_whole_in_an_80_column_terminal():
    import io

    from rich.console import Console

    from routecli.analysis.probe import REFERENCES
    from routecli.cli.probe import probe_table
    from routecli.pe import PE_REGISTRY

    names = [*PE_REGISTRY, *REFERENCES]
    table = probe_table("PE probe on cvrp-100: Spearman rho (ours | PE paper Table 3)", names)
    for name in names:
        table.add_row(name, "reference", *["-0.123"] * 6, "12.34")
    text = io.StringIO()
    Console(file=text, width=80).print(table)
    lines = text.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.strip()}
    assert set(names) <= set(rows), set(names) - set(rows)
    assert all(rows[n] == ["reference", *["-0.123"] * 6, "12.34"] for n in names)
