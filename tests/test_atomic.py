import csv
import multiprocessing
import os
import threading
from multiprocessing.synchronize import Event

import pytest

from routecli.atomic import (
    append_csv_rows,
    atomic_write,
    atomic_write_text,
    claim,
    one_at_a_time,
)


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


def test_appended_rows_from_many_processes_never_interleave(tmp_path):
    path = tmp_path / "rows.csv"
    fields = ["writer", "index", "text"]
    with multiprocessing.get_context("fork").Pool(4) as pool:
        pool.starmap(_append_many, [(path, fields, w) for w in range(4)])
    with open(path, newline="") as handle:
        lines = handle.read().splitlines()
    assert lines[0] == "writer,index,text"  # one header, written by whoever came first
    rows = list(csv.DictReader(lines))
    assert sorted((int(r["writer"]), int(r["index"])) for r in rows) == \
        [(w, i) for w in range(4) for i in range(50)]
    assert all(r["text"] == "x" * 500 for r in rows)


def _append_many(path, fields, writer):
    for i in range(50):
        append_csv_rows(path, fields, [{"writer": writer, "index": i, "text": "x" * 500}])


def _with_writer_column(text: str) -> str:
    """A file of columns ``index,text`` in the columns ``writer,index,text`` (writer -1)."""
    lines = text.splitlines()
    return "writer,index,text\r\n" + "".join(f"-1,{line}\r\n" for line in lines[1:])


def _migrate_and_append(path, fields, writer):
    for i in range(50):
        append_csv_rows(path, fields, [{"writer": writer, "index": i, "text": "x" * 500}],
                        migrate=_with_writer_column)


def test_a_file_migrated_while_other_processes_append_loses_no_row(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("index,text\r\n0,old\r\n1,torn")  # an earlier layout, its last row torn
    fields = ["writer", "index", "text"]
    with multiprocessing.get_context("fork").Pool(4) as pool:
        pool.starmap(_migrate_and_append, [(path, fields, w) for w in range(4)])
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0] == {"writer": "-1", "index": "0", "text": "old"}  # migrated once, first
    assert sorted((int(r["writer"]), int(r["index"])) for r in rows[1:]) == \
        [(w, i) for w in range(4) for i in range(50)]  # waiters on the old file reopened it


def _hold(path, ready, release) -> None:
    with claim(path) as mine:
        assert mine
        ready.set()
        release.wait(30)


def holding(lock) -> tuple[multiprocessing.Process, Event]:
    """Another process that holds ``lock`` until the returned event is set (or it is killed)."""
    ready, release = multiprocessing.Event(), multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold, args=(lock, ready, release))
    holder.start()
    assert ready.wait(30)
    return holder, release


def test_a_claim_is_exclusive_and_dies_with_its_holder(tmp_path):
    lock = tmp_path / "work" / "a.lock"
    holder, _ = holding(lock)
    with claim(lock) as mine:
        assert not mine
    holder.kill()  # SIGKILL: no cleanup runs, the kernel releases the lock
    holder.join()
    with claim(lock) as mine:
        assert mine
    with claim(lock) as first, claim(lock) as second:  # even within one process
        assert first and not second


def test_one_at_a_time_waits_for_the_holder_then_enters(tmp_path):
    lock = tmp_path / "labels" / "s0.lock"
    holder, release = holding(lock)
    entered = threading.Event()

    def enter() -> None:
        with one_at_a_time(lock):
            entered.set()

    waiter = threading.Thread(target=enter)
    waiter.start()
    assert not entered.wait(0.5)  # the holder still has it
    release.set()
    assert entered.wait(30)
    waiter.join()
    holder.join()
