import os

import pytest

from routecli.atomic import atomic_write, atomic_write_text


def test_the_file_gets_the_umask_permissions_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        path = atomic_write_text(tmp_path / "a" / "x.sol", "Route #1: 1\nCost 2\n")
    finally:
        os.umask(old)
    assert path.read_text() == "Route #1: 1\nCost 2\n"
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "x.sol"
    path.write_text("old")

    def explode(handle):
        handle.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(path, explode)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.sol"]
