import pytest

from routecli.bench import resolve
from routecli.errors import OptionError


def test_named_sets_resolve_under_the_data_root(benchdata):
    assert len(resolve(["tsplib"], benchdata)) == 81
    assert len(resolve(["cvrplib-x", "cvrplib-ags"], benchdata)) == 110


def test_folders_files_and_repeats(data_dir):
    files = resolve([str(data_dir), str(data_dir / "tiny.vrp")])
    assert files.count(data_dir / "tiny.vrp") == 1
    assert {f.suffix for f in files} <= {".tsp", ".vrp", ".txt"}


def test_unknown_target_and_missing_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROUTECLI_DATA", raising=False)
    with pytest.raises(OptionError, match="neither a set"):
        resolve(["nope"])
    with pytest.raises(OptionError, match="needs a data root"):
        resolve(["tsplib"])
