"""The per-pair lock of a comparison run folder: exclusive while its process lives, taken over
after."""

from __future__ import annotations

from routecli.improve.lock import boot_id, claimed


def test_a_lock_is_exclusive_while_its_process_lives_and_taken_over_after(tmp_path):
    import os
    import subprocess
    import sys

    lock = tmp_path / "models" / "pair.lock"
    with claimed(lock) as first:
        assert first and lock.read_text().startswith(f"{os.getpid()} ")
        with claimed(lock) as second:
            assert not second  # held by a live process (this one)
    assert not lock.exists()  # released on leaving
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    lock.write_text(f"{ended.stdout.strip()} {boot_id()}")
    with claimed(lock) as taken:
        assert taken  # its process has ended: stale
    lock.write_text(f"{os.getpid()} another-boot")
    with claimed(lock) as taken:
        assert taken  # written before this boot: the pid may be another process's now
    lock.write_text("")
    with claimed(lock) as taken:
        assert not taken  # being written by its creator
    os.utime(lock, (0, 0))
    with claimed(lock) as taken:
        assert taken  # empty for long: its creator died before writing
