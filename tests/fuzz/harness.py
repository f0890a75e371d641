"""Run fuzz cases (:mod:`.strategies`) through the CLI entry point and count what happens.

The runs happen in one worker process (forked once, so the CLI is imported once), with
stdout/stderr captured at the file-descriptor level, an address-space limit, and a per-run
timeout after which the worker is killed and replaced; a run of several ``copies`` forks one
process per copy from the worker, started together. The entry point is passed in (the
script hands over ``routecli.cli.app.main``), so nothing here imports the CLI. Outcomes per run
(per copy):

- ``valid``: exit 0 where the oracle allows it, and the checks pass (strict JSON on every
  ``--json`` line; a written solution that validates and re-costs to the reported value; the
  best-known source a case names);
- ``clean error``: exit 2 with one stderr line of at most :data:`MAX_ERROR_CHARS` characters;
- ``infeasible reported``: exit 1 from ``validate`` where the oracle expects an infeasible
  solution;
- ``traceback``: an exception other than ``SystemExit`` escaped, or the worker died;
- ``unclean error``: more than one stderr line or a longer one;
- ``invalid accepted``: exit 0 or 1 although the oracle says the input must be refused, exit 0
  for an infeasible solution, or a failed check after exit 0;
- ``valid input rejected``: exit 2 although the oracle says the input is valid;
- ``wrong exit``: any other exit code for what the oracle expects (1 for a valid input, say);
- ``output from failed run``: a non-zero exit left a file in the output folder, or changed a
  file the run must leave alone;
- ``hang``: the run passed the timeout.
"""

from __future__ import annotations

import csv
import json
import math
import multiprocessing as mp
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path

from tests.fuzz.strategies import Case, Run, Tear

Main = Callable[[list[str]], int]
MEMORY_LIMIT = 6 * 2**30  # bytes of address space per worker: a runaway allocation fails fast
MAX_ERROR_CHARS = 250  # "error: " + a message of at most 200 characters, with room to spare
OUTCOMES = ("valid", "clean error", "infeasible reported", "traceback", "unclean error",
            "invalid accepted", "valid input rejected", "wrong exit", "output from failed run",
            "hang")
BAD = ("traceback", "unclean error", "invalid accepted", "valid input rejected", "wrong exit",
       "output from failed run", "hang")


# --- running one command in the worker ---------------------------------------------------------

def capture(main: Main, argv: list[str]) -> dict:
    """Run ``main(argv)`` with fds 1 and 2 redirected to files; exit code, output, exception."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        saved = os.dup(1), os.dup(2)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        # streams on the redirected fds: a test runner may have replaced sys.stdout/stderr
        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = open(os.dup(1), "w"), open(os.dup(2), "w")  # noqa: SIM115
        exc = ""
        start = time.perf_counter()
        try:
            code: int | None = main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except BaseException:  # the point of the harness: anything else is a traceback
            code = None
            exc = traceback.format_exc()
        finally:
            seconds = time.perf_counter() - start
            sys.stdout.close()
            sys.stderr.close()
            sys.stdout, sys.stderr = streams
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        return {"code": code, "stdout": out.read().decode("utf-8", "replace"),
                "stderr": err.read().decode("utf-8", "replace"), "exception": exc,
                "seconds": seconds}


def capture_copies(main: Main, argv: list[str], copies: int) -> list[dict]:
    """``copies`` forked processes run ``main(argv)`` at the same time (what two users starting
    one command at once do); each one's :func:`capture`, in order."""
    children = []
    for _ in range(copies):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run, send the result, leave without the parent's cleanup
            os.close(read)
            with os.fdopen(write, "w") as pipe:
                json.dump(capture(main, argv), pipe)
            os._exit(0)
        os.close(write)
        children.append((pid, read))
    results = []
    for pid, read in children:
        with os.fdopen(read) as pipe:
            text = pipe.read()
        _, status = os.waitpid(pid, 0)
        results.append(json.loads(text) if text else
                       {"code": None, "stdout": "", "stderr": "", "seconds": 0.0,
                        "exception": f"copy died (wait status {status})"})
    return results


def _worker(conn: Connection, main: Main) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    warnings.simplefilter("always")  # each run prints its warnings, as a fresh process would
    while True:
        try:
            job = conn.recv()
        except EOFError:  # the driver is gone
            return
        if job is None:
            return
        argv, copies = job
        conn.send([capture(main, argv)] if copies == 1 else capture_copies(main, argv, copies))


class Runner:
    """One worker process at a time; killed and replaced after a timeout or a crash."""

    def __init__(self, main: Main, timeout: float) -> None:
        self.main = main
        self.timeout = timeout
        self.ctx = mp.get_context("fork")
        self._start()

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        # not a daemon: a command may start worker processes of its own (bench's executor),
        # which a daemon may not; the worker ends when its pipe closes
        self.proc = self.ctx.Process(target=_worker, args=(child, self.main))
        self.proc.start()
        child.close()

    def _restart(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self._start()

    def run(self, argv: list[str], copies: int = 1) -> list[dict]:
        """One result per copy (a hang or a dead worker: one result for all)."""
        self.conn.send((argv, copies))
        if not self.conn.poll(self.timeout):
            self._restart()
            return [{"hang": True, "seconds": self.timeout}]
        try:
            return self.conn.recv()
        except EOFError:
            self.proc.join()
            code = self.proc.exitcode
            self._start()
            return [{"code": None, "stdout": "", "stderr": "", "seconds": 0.0,
                     "exception": f"worker died (exit code {code})"}]

    def close(self) -> None:
        self.conn.send(None)
        self.proc.join(10)


# --- checks and classification -----------------------------------------------------------------

COST = re.compile(r"cost=(\S+)")
GAP = re.compile(r"gap=(-?[\d.,]+)%")


def strict_json_lines(stdout: str) -> str | None:
    """Why a ``--json`` output is not strict JSON (``NaN``, ``Infinity``, not an object)."""
    def refuse(token: str) -> None:
        raise ValueError(f"{token} is not JSON")

    for line in stdout.splitlines():
        try:
            if not isinstance(json.loads(line, parse_constant=refuse), dict):
                return f"not a JSON object: {line[:80]!r}"
        except ValueError as exc:
            return f"not strict JSON ({exc}): {line[:80]!r}"
    return None


def check_solution(file: Path, out_dir: Path, stdout: str, sibling: bool) -> str | None:
    """Why a successful ``solve --out`` is wrong (cost, validation, re-cost, a negative gap to a
    registry value), or ``None``. With a ``sibling`` solution file beside the instance the gap is
    to that file's (re-costed) solution, which a mutated instance may let ``nn`` beat."""
    from routecli.io import read_instance, read_solution
    from routecli.problems import validate

    found = COST.search(stdout)
    if found is None:
        return "no cost in the output"
    cost = float(found.group(1).replace(",", ""))
    instance = read_instance(file)
    if not math.isfinite(cost) or (cost < 0 and instance.problem != "pcvrp"):
        return f"reported cost {cost}"
    gap = GAP.search(stdout)
    if not sibling and gap and float(gap.group(1).replace(",", "")) < -1e-6:
        return f"negative gap {gap.group(1)}%"
    written = sorted(out_dir.iterdir()) if out_dir.is_dir() else []
    if len(written) != 1:
        return f"{len(written)} files written"
    solution = read_solution(written[0], instance)
    problems = validate(instance, solution)
    if problems:
        return f"written solution invalid: {problems[0]}"
    recost = instance.cost(solution)  # type: ignore[arg-type]
    if not math.isclose(recost, cost, rel_tol=1e-6, abs_tol=0.5):
        return f"written solution costs {recost}, reported {cost}"
    return None


def snapshot(run: Run, folder: Path) -> dict[str, bytes | None]:
    """The bytes of every file a run's ``unchanged:`` checks name (``None``: absent)."""
    names = [c.split(":", 1)[1] for c in run.checks if c.startswith("unchanged:")]
    return {n: (folder / n).read_bytes() if (folder / n).is_file() else None for n in names}


def changed_file(before: dict[str, bytes | None], folder: Path) -> str | None:
    """Why a file the run had to leave alone is not as it was, or ``None``."""
    for name, data in before.items():
        now = (folder / name).read_bytes() if (folder / name).is_file() else None
        if now != data:
            return f"{name} was {'removed' if now is None else 'changed'}"
    return None


def results_rows(out_dir: Path, count: int) -> str | None:
    """Why ``out_dir/results.csv`` is not ``count`` complete rows, one per instance (read with
    the csv module, not routecli's reader), or ``None``."""
    path = out_dir / "results.csv"
    if not path.is_file():
        return "no results.csv"
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows or "instance" not in rows[0]:
        return "results.csv has no header with an instance column"
    body = rows[1:]
    if any(len(row) != len(rows[0]) for row in body):
        return "results.csv holds a torn row"
    names = [row[rows[0].index("instance")] for row in body]
    if len(names) != count or len(set(names)) != count:
        return f"results.csv has {len(names)} rows for {len(set(names))} of {count} instances"
    return None


def failed_check(run: Run, result: dict, folder: Path, case: Case,
                 before: dict[str, bytes | None] | None = None) -> str | None:
    """Why the output of a run that exited 0 is wrong, or ``None``."""
    if "--json" in run.argv:
        reason = strict_json_lines(result["stdout"])
        if reason:
            return reason
    reason = changed_file(before or {}, folder)
    if reason:
        return reason
    for check in run.checks:
        kind, _, arg = check.partition(":")
        if kind == "regular" and ((folder / arg).is_symlink() or not (folder / arg).is_file()):
            return f"{arg} is not a regular file"
        if kind == "rows":
            out, _, count = arg.rpartition(":")
            reason = results_rows(folder / out, int(count))
            if reason:
                return reason
        if kind == "within" and result["seconds"] > float(arg):
            return f"took {result['seconds']:.1f} s, more than {arg} s"
        if check == "solution":
            argv = [a.replace("{dir}", str(folder)) for a in run.argv]
            try:
                reason = check_solution(Path(argv[1]), folder / "out", result["stdout"],
                                        case.sibling)
            except Exception as exc:  # the check itself read something the CLI accepted
                reason = f"check failed: {type(exc).__name__}: {str(exc)[:150]}"
            if reason:
                return reason
        elif check.startswith("bks:") and f"({check[4:]})" not in result["stdout"]:
            return f"best-known source {check[4:]} not found"
    return None


def classify(run: Run, result: dict, folder: Path, case: Case,
             before: dict[str, bytes | None] | None = None) -> tuple[str, str]:
    """Outcome name and a detail line for one run (``before``: :func:`snapshot`)."""
    if result.get("hang"):
        return "hang", ""
    if result["exception"]:
        return "traceback", result["exception"].strip().splitlines()[-1][:200]
    code, stderr = result["code"], result["stderr"].strip()
    lines = stderr.splitlines()
    out_dir = folder / "out"
    if code not in (0, 1) and out_dir.is_dir() and any(out_dir.iterdir()) \
            and run.argv[0] == "solve" and "--out" in run.argv:
        return "output from failed run", stderr[:200]
    changed = changed_file(before or {}, folder)
    if code != 0 and changed:
        return "output from failed run", changed
    if code == 2:
        if len(lines) != 1 or len(lines[0]) > MAX_ERROR_CHARS:
            return "unclean error", f"{len(lines)} lines, {len(stderr)} chars: {stderr[:150]!r}"
        if run.expect in ("accept", "infeasible"):
            return "valid input rejected", stderr[:200]
        return "clean error", lines[0][:200]
    if code == 1:
        if run.argv[0] == "validate" and run.expect in ("infeasible", "any"):
            return "infeasible reported", ""
        if run.expect == "reject":
            return "invalid accepted", f"exit 1: {stderr[:150]}"
        return "wrong exit", f"exit 1 (expected {run.expect}): {stderr[:150]}"
    if code != 0:
        return "wrong exit", f"exit {code}: {stderr[:200]}"
    if run.expect in ("reject", "infeasible"):
        return "invalid accepted", f"exit 0, expected {run.expect}"
    if stderr:
        return "unclean error", f"exit 0 with stderr: {stderr[:150]!r}"
    reason = failed_check(run, result, folder, case, before)
    return ("invalid accepted", reason) if reason else ("valid", "")


# --- driver ------------------------------------------------------------------------------------

def tear(path: Path, share: float) -> None:
    """Cut ``path`` inside its last line, ``share`` of the way in (see :class:`Tear`)."""
    data = path.read_bytes() if path.is_file() else b""
    end = len(data) - data.endswith(b"\n")
    start = data.rfind(b"\n", 0, end) + 1
    path.write_bytes(data[: start + round(share * (end - start))])


@contextmanager
def unwritable(folders: list[Path]) -> Iterator[bool]:
    """Make ``folders`` unwritable for the steps of a case: ``chattr +i`` (which binds root
    too), else, for a user other than root, mode 0555. Yields whether that worked; undone on
    exit, so that the case folder can be removed."""
    chattr = shutil.which("chattr")
    done: list[Path] = []
    try:
        for folder in folders:
            if chattr and subprocess.run([chattr, "+i", str(folder)],
                                         capture_output=True).returncode == 0:
                done.append(folder)
            elif os.geteuid() != 0:
                folder.chmod(0o555)
                done.append(folder)
        yield len(done) == len(folders)
    finally:
        for folder in done:
            if chattr:
                subprocess.run([chattr, "-i", str(folder)], capture_output=True)
            folder.chmod(0o755)


def run_case(runner: Runner, case: Case, number: int, work: Path) -> list[dict]:
    """Write the case's files and links, take its steps in order; one row per run and copy
    (details without the case folder). Where a folder cannot be made unwritable, its runs
    expect ``any``."""
    folder = work / f"case{number}"
    folder.mkdir()
    for name, data in case.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    for name, target in case.links.items():
        (folder / name).symlink_to(target)
    for name in case.read_only:
        (folder / name).mkdir(parents=True, exist_ok=True)
    rows = []
    with unwritable([folder / name for name in case.read_only]) as protected:
        for step in case.runs:
            if isinstance(step, Tear):
                tear(Path(step.path.replace("{dir}", str(folder))), step.share)
                continue
            run = step if protected else replace(step, expect="any")
            before = snapshot(run, folder)
            results = runner.run([a.replace("{dir}", str(folder)) for a in run.argv], run.copies)
            for copy, result in enumerate(results):
                outcome, detail = classify(run, result, folder, case, before)
                command = " ".join(run.argv).replace("{dir}/", "")
                rows.append({"case": number, "strategy": case.strategy, "input": case.detail,
                             "invocation": command + (f" [copy {copy + 1} of {run.copies}]"
                                                   if run.copies > 1 else ""),
                             "expect": run.expect, "outcome": outcome,
                             "exit": result.get("code", ""), "seconds": f"{result['seconds']:.3f}",
                             "detail": detail.replace(f"{folder}/", "")
                             .removeprefix("error: ")[:160]})
    return rows


def table(rows: list[dict], strategies: list[str]) -> str:
    """Markdown: one row per strategy, one column per outcome that happened, runs in all."""
    seen = [o for o in OUTCOMES if any(r["outcome"] == o for r in rows)]
    for outcome in ("traceback", "invalid accepted"):  # always shown, as the verdict
        if outcome not in seen:
            seen.append(outcome)
    head = ["| strategy | runs | " + " | ".join(seen) + " |",
            "|---|---:|" + "---:|" * len(seen)]
    body = []
    for name in [*strategies, "all"]:
        mine = [r for r in rows if name in ("all", r["strategy"])]
        cells = [str(sum(r["outcome"] == o for r in mine)) for o in seen]
        label = f"**{name}**" if name == "all" else name
        body.append(f"| {label} | {len(mine)} | " + " | ".join(cells) + " |")
    return "\n".join(head + body)
