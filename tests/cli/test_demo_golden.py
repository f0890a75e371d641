"""The demo commands print and write what they did before the restructuring of issue 53:
stdout and every text file they write compared with golden copies (tests/data/golden), times,
dates, commits and temporary paths masked; binary files (weights, pictures) by name.

The golden copies came from the code before the change. Rewrite them only for an intended change
of output: ``ROUTECLI_GOLDEN=write pytest tests/cli/test_demo_golden.py``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from pathlib import Path

import pytest

from routecli.cli.app import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden"
CVRP, TSP = "data/demo/cvrp-demo-50.vrp", "data/demo/tsp-demo-50.tsp"
ONE = ["--threads", "1"]
CASES: dict[str, list[str]] = {
    "solve-miloop": ["solve", CVRP, "--model", "miloop", "--seed", "0", *ONE],
    "solve-miloop-multistart": ["solve", CVRP, "--model", "miloop", "--decode", "multistart",
                                "--starts", "50", "--augment", "--seed", "0", "--json",
                                "--csv", "{out}/summary.csv", *ONE],
    "solve-tsp-miloop": ["solve", TSP, "--model", "miloop", "--out", "{out}/tsp.tour", *ONE],
    "solve-hgs": ["solve", CVRP, "--model", "hgs", "--iterations", "2000", "--seed", "1",
                  "--out", "{out}/cvrp-demo-50-hgs.sol", *ONE],
    "validate": ["validate", CVRP, "data/demo/cvrp-demo-50.sol"],
    "info": ["info", TSP],
    "solve-nn-csv": ["solve", TSP, CVRP, "--model", "nn", "--csv", "{out}/summary.csv", *ONE],
    "solve-nn-folder": ["solve", "data/demo/", "--model", "nn", "--json", "--out",
                        "{out}/solutions/", *ONE],
    "bench-nn": ["bench", CVRP, TSP, "data/demo/vrptw-demo-50.vrp", "--model", "nn", "--out",
                 "{out}/bench", "--workers", "1", *ONE],  # in order, as before its pool
    "compare-pe": ["compare-pe", "--problem", "cvrp", "--size", "6", "--pe", "ipe,nope",
                   "--runs", "1", "--budget", "smoke", "--test-size", "2", "--images", "1",
                   "--out", "{out}/compare", *ONE],
    "probe": ["probe", "--pe", "ipe,rope", "--set", "cvrp-10", "--num", "4", "--pairs", "8",
              "--no-references", "--out", "{out}/probe.csv", *ONE],
    "analyze-memory": ["analyze", "memory", "--problem", "tsp", "--size", "10", "--num", "2",
                       "--out", "{out}/memory.json", *ONE],
    "train": ["train", "--problem", "tsp", "--size", "8", "--steps", "2", "--batch", "2",
              "--rollouts", "4", "--val-size", "8", "--val-instances", "2", "--val-every", "2",
              "--out", "{out}/train", *ONE],
}
BINARY = {".pt", ".png", ".npz", ".lock"}

# Keys and table columns whose values measure time, or name when and from which commit a
# result came.
TIMED = re.compile(r"(?i)(seconds|_s$|^date$|^commit$|elapsed|time \(s\))")
SECONDS = re.compile(r"\d+(\.\d+)?(e-?\d+)?( ?)(s|ms)\b")
SPEED = re.compile(r"[\d,.]+ ?(iterations|inst|it)/s\b")
CLOCK = re.compile(r"\b\d+:\d\d:\d\d\b")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?([+-]\d\d:\d\d)?")
COMMIT = re.compile(r"\b[0-9a-f]{12}(-dirty)?\b")


def masked_text(text: str, out: Path) -> str:
    text = text.replace(str(out), "{out}").replace(str(ROOT), "{root}")
    text = STAMP.sub("<date>", text)
    text = COMMIT.sub("<commit>", text)
    text = SPEED.sub(r"<speed> \1/s", text)
    text = CLOCK.sub("<clock>", text)
    return "\n".join(masked_tables(SECONDS.sub(r"<t>\3\4", text).split("\n")))


def masked_tables(lines: list[str]) -> list[str]:
    """Table cells under a timed header (rich boxes or Markdown pipes) and timed rows of a
    Markdown table, masked."""
    spans: list[tuple[int, int]] = []  # rich: character spans of timed columns
    cells: list[int] = []  # Markdown: indices of timed columns
    shown = []
    for line in lines:
        if "┃" in line and TIMED.search(line):
            bars = [i for i, c in enumerate(line) if c == "┃"]
            spans = [(a + 1, b) for a, b in zip(bars, bars[1:]) if TIMED.search(line[a:b])]
        elif line.startswith("|") and TIMED.search(line) and not cells:
            parts = line.split("|")
            cells = [i for i, part in enumerate(parts) if TIMED.search(part) and i > 1]
            if TIMED.search(parts[1]):  # a timed row: every number in it
                line = re.sub(r"\d+(\.\d+)?", "<t>", line)
                cells = []
        elif line.startswith("|") and cells:
            parts = line.split("|")
            line = "|".join("<t>" if i in cells and re.search(r"\d", part) else part
                            for i, part in enumerate(parts))
        elif "│" in line and spans:
            for a, b in reversed(spans):  # from the right: earlier spans keep their place
                if re.search(r"\d", line[a:b]):
                    line = line[:a] + "<t>" + line[b:]
        if not line.strip():
            spans, cells = [], []
        shown.append(line)
    return shown


def masked_json(value: object, out: Path, key: str = "") -> object:
    if isinstance(value, dict):
        return {k: masked_json(v, out, k) for k, v in value.items()}
    if isinstance(value, list):
        return [masked_json(v, out, key) for v in value]
    if TIMED.search(key) and value is not None:
        return "<t>"
    return masked_text(value, out) if isinstance(value, str) else value


def masked_file(path: Path, out: Path) -> str:
    text = path.read_text()
    if path.suffix == ".json":
        return json.dumps(masked_json(json.loads(text), out), indent=1, sort_keys=True)
    if path.suffix == ".jsonl":
        return "\n".join(json.dumps(masked_json(json.loads(line), out), sort_keys=True)
                         for line in text.splitlines() if line.strip())
    if path.suffix == ".csv":  # sorted: rows of tasks run in parallel come in any order
        rows = list(csv.DictReader(io.StringIO(text)))
        return "\n".join(sorted(json.dumps(masked_json(row, out), sort_keys=True) for row in rows))
    return masked_text(text, out)


def masked_stdout(text: str, out: Path) -> str:
    """Lines of JSON masked as JSON, the runs of other lines between them as text."""
    shown: list[str] = []
    plain: list[str] = []
    for line in [*text.splitlines(), "{}"]:
        try:
            value = json.loads(line)
        except ValueError:
            plain.append(line)
            continue
        if plain:
            shown.append(masked_text("\n".join(plain), out))
            plain = []
        shown.append(json.dumps(masked_json(value, out), sort_keys=True))
    return "\n".join(shown[:-1])


def snapshot(name: str, out: Path, stdout: str) -> dict[str, str]:
    """What a run of case ``name`` shows: its stdout and its files, masked."""
    shown = {"stdout": masked_stdout(stdout, out)}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        relative = str(path.relative_to(out))
        shown[relative] = "<binary>" if path.suffix in BINARY else masked_file(path, out)
    return shown


@pytest.mark.parametrize("name", list(CASES))
def test_a_demo_command_prints_and_writes_what_it_did_before(name, tmp_path, capsys,
                                                             monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    out.mkdir()
    argv = [a.replace("{out}", str(out)) for a in CASES[name]]
    monkeypatch.setattr(sys, "argv", ["routecli", *argv])  # the command results record
    assert main(argv) == 0
    shown = snapshot(name, out, capsys.readouterr().out)
    golden = GOLDEN / f"{name}.json"
    if os.environ.get("ROUTECLI_GOLDEN") == "write":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(shown, indent=1, sort_keys=True) + "\n")
    expected = json.loads(golden.read_text())
    assert shown.keys() == expected.keys()
    for part, text in expected.items():
        assert shown[part] == text, part
