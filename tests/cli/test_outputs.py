"""The one guard of every path a command writes (routecli.cli.outputs): parsed by
``output_path`` (empty, too long), then a file is replaced only when routecli wrote it and a
folder must be one; every refusal is one line, exit 2, before any work, nothing written."""

from __future__ import annotations

import pytest

from routecli.cli.app import main
from routecli.cli.outputs import output_path
from tests.cli.test_bounds import commands

WRITTEN = ("--out", "--csv", "--figure", "--run-dir", "--labels")
OPTIONS = [(path, param) for path, command in commands() for param in command.params
           if param.opts[0] in WRITTEN]
# What a command needs besides the path option to get as far as checking it.
NEEDS = {"solve": ["{tiny}"], "bench": ["{tiny}"], "generate": ["tsp"],
         "plot solution": ["{tiny}", "{sol}"]}


def _argv(path: list[str], data_dir) -> list[str]:
    tiny, sol = str(data_dir / "tiny.vrp"), str(data_dir / "tiny.sol")
    return [*path, *(a.format(tiny=tiny, sol=sol) for a in NEEDS.get(" ".join(path), []))]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def test_every_option_naming_what_a_command_writes_is_parsed_by_the_guard():
    assert len(OPTIONS) >= 15
    for path, param in OPTIONS:
        assert param.type_descriptor.parameter_info.parser is output_path, \
            f"{' '.join(path)} {param.opts[0]}"


@pytest.mark.parametrize("path, param", OPTIONS,
                         ids=[" ".join(p) + " " + o.opts[0] for p, o in OPTIONS])
def test_an_empty_or_too_long_path_is_one_line(path, param, data_dir, tmp_path, monkeypatch,
                                               capsys):
    monkeypatch.chdir(tmp_path)
    for value, words in (("", "is empty"), (" ", "is empty"),
                         (f"{'a' * 300}.csv", "longer than the file system allows"),
                         ("/".join(["d"] * 2100), "longer than the file system allows")):
        assert main([*_argv(path, data_dir), param.opts[0], value]) == 2
        assert words in _one_line(capsys)
    assert list(tmp_path.iterdir()) == []


USER = b"my own numbers,not routecli's\n1,2\n"


@pytest.mark.parametrize("argv", [
    ["probe", "--set", "cvrp-10", "--num", "2", "-o", "{dir}/user.csv"],
    ["analyze", "anisometry", "--set", "cvrp-10", "--num", "2", "-o", "{dir}/user.csv"],
    ["analyze", "entropy", "--set", "cvrp-10", "--num", "2", "-o", "{dir}/user.json"],
    ["analyze", "memory", "--size", "5", "--num", "1", "-o", "{dir}/user.csv"],
    ["analyze", "memory", "--size", "5", "--num", "1", "--figure", "{dir}/user.png"],
    ["analyze", "shift", "--size", "5", "--num", "1", "-o", "{dir}/user.json"],
    ["generate", "tsp", "-o", "{dir}/user.npz"],
    ["generate", "tsp", "--size", "5", "--format", "file", "-o", "{dir}/gen"],
    ["solve", "{tiny}", "-m", "nn", "--csv", "{dir}/user.csv"],
    ["plot", "solution", "{tiny}", "{sol}", "-o", "{dir}/user.png"],
    ["compare-pe", "--pe", "ipe", "--size", "6", "--budget", "smoke", "-o", "{dir}/run"],
], ids=lambda argv: " ".join(a for a in argv[:2] if not a.startswith("{")))
def test_a_file_routecli_did_not_write_is_left_alone(argv, data_dir, tmp_path, capsys):
    filled = [a.format(dir=tmp_path, tiny=data_dir / "tiny.vrp", sol=data_dir / "tiny.sol")
              for a in argv]
    if argv[0] == "compare-pe":  # a run folder of this protocol, then the user's summary in it
        filled += ["--test-size", "2", "--runs", "1"]
        assert main(filled) == 0
        capsys.readouterr()
    user = {"user.csv": USER, "user.json": b'{"mine": 1}\n', "user.png": b"\x89PNG\r\n\x1a\n",
            "user.npz": USER, "gen/tsp-5-s0-0.tsp": USER, "run/summary-ipe.md": USER}
    for name, data in user.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert main(filled) == 2
    assert "was not written by routecli" in _one_line(capsys)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("argv", [
    ["train", "--out", "{file}"], ["train-nds", "--out", "{file}"],
    ["compare-pe", "--out", "{file}"], ["generate", "tsp", "--format", "file", "-o", "{file}"],
    ["plot", "pe", "--out", "{file}"], ["bench", "{tiny}", "-m", "nn", "--out", "{file}"],
])
def test_a_file_where_a_folder_is_written_is_one_line(argv, data_dir, tmp_path, capsys):
    mine = tmp_path / "mine.txt"
    mine.write_bytes(USER)
    assert main([a.format(file=mine, tiny=data_dir / "tiny.vrp") for a in argv]) == 2
    assert "is a file, not a folder" in _one_line(capsys)
    assert mine.read_bytes() == USER and [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_solve_refuses_one_file_for_both_csv_and_out(data_dir, tmp_path, capsys):
    same = str(tmp_path / "x.csv")
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", "--csv", same, "-o", same]) == 2
    assert "--csv" in _one_line(capsys) and list(tmp_path.iterdir()) == []
