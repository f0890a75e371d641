"""The repository stays light (docs/development.md#repository-size): the tracked files within
the budget the page states, run state ignored but for the compact ledger, a short README."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.docs.markdown import ROOT

GIT = shutil.which("git")


def git(*args: str) -> subprocess.CompletedProcess[str]:
    assert GIT is not None
    return subprocess.run([GIT, *args], cwd=ROOT, capture_output=True, text=True)


def in_a_checkout() -> bool:
    return GIT is not None and git("rev-parse", "--is-inside-work-tree").returncode == 0


checkout = pytest.mark.skipif(not in_a_checkout(), reason="not a git checkout")


def budget_bytes() -> int:
    page = (ROOT / "docs" / "development.md").read_text()
    (mib,) = re.findall(r"stay under \*\*(\d+) MiB\*\*", page)
    return int(mib) * 2**20


@checkout
def test_the_tracked_files_fit_the_stated_budget():
    tracked = git("ls-files", "-z").stdout.split("\0")
    size = sum((ROOT / name).stat().st_size for name in tracked
               if name and (ROOT / name).is_file())
    assert size <= budget_bytes(), f"tracked files hold {size / 2**20:.0f} MiB"


@checkout
@pytest.mark.parametrize(("path", "ignored"), [
    ("data/runs/some-run/last.pt", True),
    ("data/runs/some-run/state/ipe-s0.pt", True),
    ("data/runs/some-run/state-bf16.pt", False),
    ("data/runs/a/b/state-bf16.pt", False),
    ("routecli/checkpoints/new-model.pt", False),
])
def test_run_state_is_ignored_but_the_compact_ledger(path, ignored):
    # --no-index: the rule, whether or not a file of that name is tracked already
    assert (git("check-ignore", "--no-index", "-q", path).returncode == 0) == ignored


def test_the_readme_is_a_five_minute_read():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
