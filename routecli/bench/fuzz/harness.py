"""Run fuzz cases (:mod:`.strategies`) through the CLI entry point and count what happens.

The runs happen in one worker process (forked once, so the CLI is imported once), with
stdout/stderr captured at the file-descriptor level, an address-space limit, and a per-run
timeout after which the worker is killed and replaced. The entry point is passed in (the
script hands over ``routecli.cli.app.main``), so nothing here imports the CLI. Outcomes per run:

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
- ``output from failed run``: a non-zero exit left a file in the output folder;
- ``hang``: the run passed the timeout.
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import os
import re
import resource
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

from routecli.bench.fuzz.strategies import Case, Run

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


def _worker(conn: Connection, main: Main) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    warnings.simplefilter("always")  # each run prints its warnings, as a fresh process would
    while True:
        argv = conn.recv()
        if argv is None:
            return
        conn.send(capture(main, argv))


class Runner:
    """One worker process at a time; killed and replaced after a timeout or a crash."""

    def __init__(self, main: Main, timeout: float) -> None:
        self.main = main
        self.timeout = timeout
        self.ctx = mp.get_context("fork")
        self._start()

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.main), daemon=True)
        self.proc.start()
        child.close()

    def _restart(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self._start()

    def run(self, argv: list[str]) -> dict:
        self.conn.send(argv)
        if not self.conn.poll(self.timeout):
            self._restart()
            return {"hang": True, "seconds": self.timeout}
        try:
            return self.conn.recv()
        except EOFError:
            self.proc.join()
            code = self.proc.exitcode
            self._start()
            return {"code": None, "stdout": "", "stderr": "", "seconds": 0.0,
                    "exception": f"worker died (exit code {code})"}

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


def failed_check(run: Run, result: dict, folder: Path, case: Case) -> str | None:
    """Why the output of a run that exited 0 is wrong, or ``None``."""
    if "--json" in run.argv:
        reason = strict_json_lines(result["stdout"])
        if reason:
            return reason
    for check in run.checks:
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


def classify(run: Run, result: dict, folder: Path, case: Case) -> tuple[str, str]:
    """Outcome name and a detail line for one run."""
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
    reason = failed_check(run, result, folder, case)
    return ("invalid accepted", reason) if reason else ("valid", "")


# --- driver ------------------------------------------------------------------------------------

def run_case(runner: Runner, case: Case, number: int, work: Path) -> list[dict]:
    """Write the case's files, run its commands in order; one row per run (details without the
    case folder)."""
    folder = work / f"case{number}"
    folder.mkdir()
    for name, data in case.files.items():
        (folder / name).write_bytes(data)
    rows = []
    for run in case.runs:
        result = runner.run([a.replace("{dir}", str(folder)) for a in run.argv])
        outcome, detail = classify(run, result, folder, case)
        rows.append({"case": number, "strategy": case.strategy, "input": case.detail,
                     "command": " ".join(run.argv).replace("{dir}/", ""), "expect": run.expect,
                     "outcome": outcome, "exit": result.get("code", ""),
                     "seconds": f"{result['seconds']:.3f}",
                     "detail": detail.replace(f"{folder}/", "").removeprefix("error: ")[:160]})
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
