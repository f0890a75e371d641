"""Inputs as the CLI takes them: folders expand to their instance files; a file is read once
(issue 15, item 13, input part)."""

from pathlib import Path

import pytest

from routecli.errors import InstanceFormatError, RoutecliError
from routecli.io import expand_inputs, read_instance


def test_folders_expand_to_sorted_instance_files(data_dir, tmp_path):
    for name in ("b.vrp", "a.tsp", "c.txt", "notes.md", "a.opt.tour"):
        (tmp_path / name).write_text("x")
    tiny = data_dir / "tiny.vrp"
    assert expand_inputs([tiny, tmp_path, str(tiny)]) == [
        tiny, tmp_path / "a.tsp", tmp_path / "b.vrp", tmp_path / "c.txt"]


def test_a_folder_named_like_a_benchmark_set_is_a_folder(tmp_path, monkeypatch):
    (tmp_path / "tsplib").mkdir()
    (tmp_path / "tsplib" / "x.tsp").write_text("x")
    monkeypatch.chdir(tmp_path)
    assert expand_inputs(["tsplib"]) == [Path("tsplib") / "x.tsp"]


def test_missing_paths_and_empty_folders_are_one_line_errors(tmp_path):
    with pytest.raises(InstanceFormatError, match=r"^.*nowhere\.vrp: no such file or folder$"):
        expand_inputs([tmp_path / "nowhere.vrp"])
    with pytest.raises(RoutecliError, match="no instance files"):
        expand_inputs([tmp_path])


def test_read_instance_on_a_folder_says_so(tmp_path):
    with pytest.raises(InstanceFormatError, match="is a folder, not an instance file"):
        read_instance(tmp_path)


@pytest.mark.parametrize("name", ["tiny.vrp", "tiny.tsp", "tiny_solomon.txt", "upper4.tsp"])
def test_read_instance_reads_the_file_once(data_dir, monkeypatch, name):
    reads = []
    original = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: pytest.fail("read_text used"))
    read_instance(data_dir / name)
    assert reads == [data_dir / name]
