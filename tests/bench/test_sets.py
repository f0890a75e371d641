import pytest

from routecli.bench import resolve
from routecli.errors import OptionError
from routecli.io import INSTANCE_SUFFIXES


def test_named_sets_resolve_under_the_data_root(benchdata):
    assert len(resolve(["tsplib"], benchdata)) == 81
    assert len(resolve(["cvrplib-x", "cvrplib-ags"], benchdata)) == 110


def test_folders_files_and_repeats(data_dir):
    files = resolve([str(data_dir), str(data_dir / "tiny.vrp")])
    assert files.count(data_dir / "tiny.vrp") == 1
    assert {f.suffix for f in files} <= set(INSTANCE_SUFFIXES)
    assert not any(f.suffix in (".sol", ".tour", ".pt") for f in files)


def test_unknown_target_and_missing_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROUTECLI_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "no-user-data"))
    with pytest.raises(OptionError, match="neither a set"):
        resolve(["nope"])
    with pytest.raises(OptionError, match="no data folder; routecli data fetch"):
        resolve(["tsplib"])
    (tmp_path / "data").mkdir()
    with pytest.raises(OptionError, match="no [*].tsp files in .*routecli data fetch --set"):
        resolve(["tsplib"], tmp_path / "data")


def test_pick_cvrplib_x_orders_by_size_and_spreads():
    from pathlib import Path

    from routecli.bench.sets import pick_cvrplib_x

    files = [Path(f"X-n{n}-k5.vrp") for n in (300, 101, 1001, 502, 200)]
    assert [f.stem for f in pick_cvrplib_x(files, "all")][:2] == ["X-n101-k5", "X-n200-k5"]
    assert [f.stem for f in pick_cvrplib_x(files, "spread:3")] == ["X-n101-k5", "X-n300-k5",
                                                                    "X-n1001-k5"]
    assert [f.stem for f in pick_cvrplib_x(files, "X-n502-k5")] == ["X-n502-k5"]
