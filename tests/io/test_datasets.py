"""The data folder of the public sets: where it is, the check against the registry, fetching
(offline: from a local archive, and the one-line failure without a network)."""

from __future__ import annotations

import dataclasses
import gzip
import io
import shutil
import tarfile

import pytest

from routecli.cli.app import main
from routecli.io import datasets
from routecli.io.datasets import DATASETS, DataError, check, data_root, fetch, user_data_folder


@pytest.fixture
def no_defaults(tmp_path, monkeypatch):
    """Neither $ROUTECLI_DATA, a user data folder nor ../shared/benchdata."""
    monkeypatch.delenv("ROUTECLI_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


def test_the_data_folder_is_the_option_the_variable_then_the_user_folder(no_defaults,
                                                                          monkeypatch):
    tmp_path = no_defaults
    assert data_root() is None
    assert user_data_folder() == tmp_path / "xdg" / "routecli"
    assert datasets.target_root() == tmp_path / "xdg" / "routecli"
    (tmp_path / "xdg" / "routecli").mkdir(parents=True)
    assert data_root() == tmp_path / "xdg" / "routecli"
    monkeypatch.setenv("ROUTECLI_DATA", str(tmp_path / "env"))
    assert data_root() == tmp_path / "env"
    assert data_root(tmp_path / "given") == tmp_path / "given"


def test_data_path_says_which_folder_and_why(no_defaults, monkeypatch, capsys):
    assert main(["data", "path"]) == 0
    assert "the user data folder; absent: routecli data fetch creates it" in capsys.readouterr().out
    monkeypatch.setenv("ROUTECLI_DATA", "/somewhere")
    assert main(["data", "path"]) == 0
    assert capsys.readouterr().out == "/somewhere ($ROUTECLI_DATA)\n"


def test_the_shared_copy_is_complete_and_the_published_instances(benchdata, capsys):
    statuses = check(benchdata, verify=False)
    assert [s.dataset.name for s in statuses] == list(DATASETS)
    assert all(s.complete for s in statuses)
    assert [len(s.found) for s in statuses] == [81, 100, 10]
    assert main(["data", "check", "--data-root", str(benchdata), "--set", "cvrplib-x"]) == 0
    assert capsys.readouterr().out.startswith("cvrplib-x: 100 of 100 instances verified")


def small_copy(benchdata, root):
    """Two X instances with their solutions, one of them altered."""
    x = root / "cvrplib" / "X"
    x.mkdir(parents=True)
    for name in ("X-n101-k25", "X-n106-k14"):
        for suffix in (".vrp", ".sol"):
            shutil.copy(benchdata / "cvrplib" / "X" / f"{name}{suffix}", x)
    text = (x / "X-n106-k14.vrp").read_text().splitlines()
    at = [line.strip() for line in text].index("NODE_COORD_SECTION") + 2
    number, x0, y0 = text[at].split()
    text[at] = f"{number} {int(x0) + 1} {y0}"
    (x / "X-n106-k14.vrp").write_text("\n".join(text) + "\n")


def test_check_finds_missing_and_altered_instances(benchdata, tmp_path, capsys):
    small_copy(benchdata, tmp_path)
    [status] = check(tmp_path, ["cvrplib-x"])
    assert status.found == ["X-n101-k25"] and len(status.missing) == 98
    assert status.wrong == {"X-n106-k14": "not the published instance (fingerprint differs)"}
    assert status.solutions == 2 and not status.complete
    assert main(["data", "check", "--data-root", str(tmp_path), "--set", "cvrplib-x"]) == 1
    out = capsys.readouterr().out
    assert "cvrplib-x: 1 of 100 instances verified" in out and "missing 98:" in out
    assert "X-n106-k14: not the published instance" in out


def archive(tmp_path, benchdata):
    """A local stand-in for the sets' archives: a GitHub-style archive (one top folder, CVRP/
    and CVRP/XXL/) and a TSPLIB-style one (gzipped members), each with a stray file."""
    github = tmp_path / "instances.tar.gz"
    with tarfile.open(github, "w:gz") as tar:
        for name in ("X-n101-k25.vrp", "X-n101-k25.sol"):
            tar.add(benchdata / "cvrplib" / "X" / name, f"Instances-abc/CVRP/{name}")
        tar.add(benchdata / "cvrplib" / "AGS" / "Antwerp1.vrp", "Instances-abc/CVRP/XXL/Antwerp1.vrp")
        tar.add(benchdata / "tsplib" / "a280.tsp", "Instances-abc/TSP/a280.tsp")  # not X or AGS
    tsplib = tmp_path / "ALL_tsp.tar.gz"
    with tarfile.open(tsplib, "w:gz") as tar:
        for name in ("a280.tsp", "a280.opt.tour", "solutions.txt"):
            data = gzip.compress((benchdata / "tsplib" / name).read_bytes())
            member = tarfile.TarInfo(f"{name}.gz")
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    return github, tsplib


def test_fetch_unpacks_the_registry_files_of_each_set_once(benchdata, tmp_path, monkeypatch,
                                                           capsys):
    github, tsplib = archive(tmp_path, benchdata)
    for name, path in (("tsplib", tsplib), ("cvrplib-x", github), ("cvrplib-ags", github)):
        monkeypatch.setitem(DATASETS, name, dataclasses.replace(DATASETS[name],
                                                                url=path.as_uri()))
    root = tmp_path / "data"
    lines: list[str] = []
    assert fetch(root, log=lines.append) == {"tsplib": 2, "cvrplib-x": 2, "cvrplib-ags": 1}
    assert sum(line.startswith("downloading") for line in lines) == 2  # one archive, two sets
    assert sorted(p.name for p in (root / "tsplib").iterdir()) == ["a280.opt.tour", "a280.tsp"]
    assert (root / "tsplib" / "a280.tsp").read_bytes() == \
        (benchdata / "tsplib" / "a280.tsp").read_bytes()
    assert sorted(p.name for p in (root / "cvrplib" / "AGS").iterdir()) == ["Antwerp1.vrp"]
    assert fetch(root, ["cvrplib-x"]) == {"cvrplib-x": 0}  # what is there stays
    [status] = check(root, ["cvrplib-x"])
    assert status.found == ["X-n101-k25"]
    assert main(["data", "fetch", "--data-root", str(root), "--set", "cvrplib-x"]) == 1
    assert "1 of 100 instances verified" in capsys.readouterr().out


def test_fetch_without_a_network_is_one_line(tmp_path, monkeypatch, capsys):
    offline = dataclasses.replace(DATASETS["tsplib"], url="http://127.0.0.1:9/ALL_tsp.tar.gz")
    monkeypatch.setitem(DATASETS, "tsplib", offline)
    with pytest.raises(DataError, match=r"^cannot download http://127.0.0.1:9/ALL_tsp.tar.gz \("):
        fetch(tmp_path / "data", ["tsplib"])
    assert main(["data", "fetch", "--data-root", str(tmp_path / "data"), "--set", "tsplib"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: cannot download ")
    assert err.rstrip().endswith("unpack it by hand into the data folder")
    assert not (tmp_path / "data" / "tsplib").exists()
