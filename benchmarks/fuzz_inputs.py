"""Fuzz the input side: mutate real benchmark files, run each through the CLI entry point, count
what happens.

    .venv/bin/python benchmarks/fuzz_inputs.py --cases 5000 --seed 0 [--data-root ../shared/benchdata]

Every case takes one small benchmark file (TSPLIB, CVRPLIB X, and EXPLICIT / VRPTW / PCVRP /
Solomon files derived from them), applies one to three mutations with a fixed seed (delete,
duplicate or swap lines; numbers replaced by NaN, inf, -1, huge values or garbage; truncation;
new DIMENSION / CAPACITY / EDGE_WEIGHT_TYPE / EDGE_WEIGHT_FORMAT; ragged rows; binary junk; giant
lines; scaled coordinates; and benign changes a reader must accept), writes it under its
original name (half the time next to the original best-known solution) and runs
``routecli.cli.app.main(["info", file])`` and ``main(["solve", file, "--model", "nn", "--out",
folder])``.

The runs happen in-process in one worker process (forked once, so the CLI is imported once),
with stdout/stderr captured at the file-descriptor level, an address-space limit, and a per-run
timeout after which the worker is killed and replaced. Outcomes per run:

- ``valid``: exit 0 and the checks below pass;
- ``clean error``: exit 2, one stderr line of at most 250 characters, no output file;
- ``traceback``: an exception other than ``SystemExit`` escaped, or the worker died;
- ``unclean error``: exit 2 (or 0) with more than one stderr line or a longer one;
- ``valid input rejected``: exit 2 although every mutation was benign (rows of a section
  shuffled, CRLF line ends, blank lines, no EOF, integers written as floats, tabs);
- ``invalid solved``: exit 0 although the file holds a number the readers must reject (NaN,
  inf, a magnitude above 1e9, a negative demand, weight, capacity, time or prize), or the
  reported cost is not finite / negative, or the written solution does not validate or
  re-cost to the reported value;
- ``output from failed run``: a non-zero exit left a file in the output folder;
- ``other exit``: any other exit code (1: the solver returned an infeasible solution);
- ``hang``: the run passed ``--timeout`` seconds.

It prints a markdown table of the counts and writes one CSV row per case (both outcomes, the
git commit, the error or failed check) to ``benchmarks/results/fuzz_inputs_s<seed>_n<cases>.csv``.
"""

from __future__ import annotations

import argparse
import csv
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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "benchdata"
MEMORY_LIMIT = 6 * 2**30  # bytes of address space per worker: a runaway allocation fails fast
MAX_ERROR_CHARS = 250  # "error: " + a message cut at 200 characters, with room for the prefix
MAGNITUDE = 1e9  # the readers' bound on coordinates, weights, demands, times and prizes
OUTCOMES = ("valid", "clean error", "traceback", "unclean error", "invalid solved",
            "valid input rejected", "output from failed run", "other exit", "hang")
Lines = list[str]


@dataclass(frozen=True)
class Seed:
    """One unmutated input: its file name, text, the best-known solution file beside it."""

    name: str
    text: str
    sibling: tuple[str, str] | None  # (file name, text)


# --- seeds -------------------------------------------------------------------------------------

def euc2d_matrix(coords: np.ndarray) -> np.ndarray:
    diff = coords[:, None, :] - coords[None, :, :]
    return np.floor(np.sqrt((diff ** 2).sum(-1)) + 0.5)


def coords_of(text: str) -> np.ndarray:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("NODE_COORD_SECTION"))
    rows = []
    for line in lines[start + 1:]:
        parts = line.split()
        if not parts or not re.match(r"^-?\d", parts[0]):
            break
        rows.append([float(parts[1]), float(parts[2])])
    return np.array(rows)


def section_values(text: str, name: str) -> np.ndarray:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(name))
    values = []
    for line in lines[start + 1:]:
        parts = line.split()
        if not parts or not re.match(r"^-?\d", parts[0]):
            break
        values.append(float(parts[1]))
    return np.array(values)


def explicit_tsp(name: str, coords: np.ndarray, fmt: str) -> str:
    """A TSPLIB EXPLICIT file with the EUC_2D distances of ``coords`` in layout ``fmt``."""
    m = euc2d_matrix(coords).astype(np.int64)
    n = len(m)
    rows: list[list[int]] = []
    for i in range(n):
        if fmt == "FULL_MATRIX":
            rows.append(list(m[i]))
        elif fmt == "UPPER_ROW":
            rows.append(list(m[i, i + 1:]))
        elif fmt == "LOWER_DIAG_ROW":
            rows.append(list(m[i, : i + 1]))
        elif fmt == "UPPER_DIAG_ROW":
            rows.append(list(m[i, i:]))
    body = "\n".join(" ".join(str(v) for v in row) for row in rows if row)
    return (f"NAME : {name}\nTYPE : TSP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
            f"EDGE_WEIGHT_FORMAT : {fmt}\nEDGE_WEIGHT_SECTION\n{body}\nEOF\n")


def with_sections(text: str, extra: str) -> str:
    """``text`` (a CVRPLIB file) with data sections ``extra`` inserted before DEPOT_SECTION."""
    head, _, tail = text.partition("DEPOT_SECTION")
    return f"{head}{extra}DEPOT_SECTION{tail}"


def derived_seeds(tsp: str, vrp: str) -> list[Seed]:
    """EXPLICIT TSP files (four layouts), an EXPLICIT CVRP and VRPTW, PCVRP and Solomon files
    built from real ones, so those readers meet the same mutations."""
    coords = coords_of(tsp)
    seeds = [Seed(f"explicit-{fmt.lower()}.tsp", explicit_tsp(f"explicit-{fmt.lower()}", coords, fmt),
                  None)
             for fmt in ("FULL_MATRIX", "UPPER_ROW", "LOWER_DIAG_ROW", "UPPER_DIAG_ROW")]
    xy = coords_of(vrp)
    demand = section_values(vrp, "DEMAND_SECTION")
    n = len(xy)
    horizon = int(4 * euc2d_matrix(xy)[0].max() + 10 * n)
    rng = np.random.default_rng(0)
    ready = np.where(np.arange(n) == 0, 0, rng.integers(0, horizon // 2, n))
    due = np.where(np.arange(n) == 0, horizon, ready + horizon // 2)
    service = np.where(np.arange(n) == 0, 0, 10)
    windows = "".join(f"{i + 1}\t{ready[i]}\t{due[i]}\n" for i in range(n))
    services = "".join(f"{i + 1}\t{service[i]}\n" for i in range(n))
    vrptw = with_sections(vrp.replace("TYPE : \tCVRP", "TYPE : \tVRPTW"),
                          f"TIME_WINDOW_SECTION\n{windows}SERVICE_TIME_SECTION\n{services}")
    prizes = "".join(f"{i + 1}\t{0 if i == 0 else 5 + i % 30}\n" for i in range(n))
    pcvrp = with_sections(vrp.replace("TYPE : \tCVRP", "TYPE : \tPCVRP"), f"PRIZE_SECTION\n{prizes}")
    capacity = re.search(r"CAPACITY\s*:\s*(\d+)", vrp)
    assert capacity is not None
    solomon_rows = "\n".join(
        f"{i:5d} {int(xy[i, 0]):8d} {int(xy[i, 1]):8d} {int(demand[i]):8d} {ready[i]:8d} "
        f"{due[i]:8d} {service[i]:8d}" for i in range(n))
    solomon = ("SOLOMONX\n\nVEHICLE\nNUMBER     CAPACITY\n"
               f"  {n}         {capacity.group(1)}\n\nCUSTOMER\n"
               "CUST NO.  XCOORD.   YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE TIME\n\n"
               f"{solomon_rows}\n")
    m = euc2d_matrix(xy).astype(np.int64)
    lower = "\n".join(" ".join(str(v) for v in m[i, :i]) for i in range(1, n))
    demands = "".join(f"{i + 1}\t{int(demand[i])}\n" for i in range(n))
    explicit_cvrp = (f"NAME : explicit-cvrp\nTYPE : CVRP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
                     f"EDGE_WEIGHT_FORMAT : LOWER_ROW\nCAPACITY : {capacity.group(1)}\n"
                     f"EDGE_WEIGHT_SECTION\n{lower}\nDEMAND_SECTION\n{demands}DEPOT_SECTION\n1\n-1\nEOF\n")
    return [*seeds, Seed("vrptw-derived.vrp", vrptw, None), Seed("pcvrp-derived.vrp", pcvrp, None),
            Seed("solomon-derived.txt", solomon, None), Seed("explicit-cvrp.vrp", explicit_cvrp, None)]


def load_seeds(root: Path) -> list[Seed]:
    """Small real files (TSPLIB under 6 KB, CVRPLIB X up to 200 customers) and derived ones."""
    seeds: list[Seed] = []
    tsps = sorted(p for p in (root / "tsplib").glob("*.tsp") if p.stat().st_size < 6000)
    vrps = sorted(p for p in (root / "cvrplib" / "X").glob("*.vrp")
                  if int(p.stem.split("-")[1][1:]) <= 201)
    for path in [*tsps, *vrps]:
        sibling = next((s for s in (path.with_suffix(".opt.tour"), path.with_suffix(".sol"))
                        if s.is_file()), None)
        seeds.append(Seed(path.name, path.read_text(),
                          (sibling.name, sibling.read_text()) if sibling else None))
    berlin = (root / "tsplib" / "berlin52.tsp").read_text()
    x101 = (root / "cvrplib" / "X" / "X-n101-k25.vrp").read_text()
    return seeds + derived_seeds(berlin, x101)


# --- mutations ---------------------------------------------------------------------------------

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
REPLACEMENTS = ["nan", "NaN", "inf", "-inf", "Infinity", "-1", "-3", "0", "1e300", "-1e300",
                "1e12", "1e10", "99999999999999999999999", "1.5", "abc", "0x1F", "", "3,5", "--2",
                "1e", "١٢"]
HEADER_VALUES = {
    "DIMENSION": ["0", "-5", "1", "2", "3", "1000000000", "99999999999999999999", "abc", "1e3",
                  "3.5", "", "nan"],
    "CAPACITY": ["nan", "inf", "-inf", "-10", "0", "1", "1e300", "abc", "", "2.5", "1e10"],
    "EDGE_WEIGHT_TYPE": ["EUC_2D", "CEIL_2D", "ATT", "GEO", "EXPLICIT", "MAN_2D", "EXACT_2D",
                         "FLOOR_2D", "", "euc_2d"],
    "EDGE_WEIGHT_FORMAT": ["FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW",
                           "LOWER_DIAG_ROW", "UPPER_COL", "LOWER_COL", "UPPER_DIAG_COL",
                           "LOWER_DIAG_COL", "FUNCTION", "BOGUS", ""],
}


def pick(rng: np.random.Generator, items: list) -> object:
    return items[int(rng.integers(len(items)))]


def delete_line(rng: np.random.Generator, lines: Lines) -> Lines:
    if not lines:
        return lines
    i = int(rng.integers(len(lines)))
    return lines[:i] + lines[i + 1:]


def duplicate_line(rng: np.random.Generator, lines: Lines) -> Lines:
    if not lines:
        return lines
    i = int(rng.integers(len(lines)))
    return lines[: i + 1] + lines[i:]


def swap_lines(rng: np.random.Generator, lines: Lines) -> Lines:
    if len(lines) < 2:
        return lines
    i, j = rng.choice(len(lines), 2, replace=False)
    out = list(lines)
    out[i], out[j] = out[j], out[i]
    return out


def replace_number(rng: np.random.Generator, lines: Lines) -> Lines:
    """One number anywhere (header or data) becomes NaN, inf, -1, a huge value or garbage."""
    candidates = [i for i, line in enumerate(lines) if NUMBER.search(line)]
    if not candidates:
        return lines
    i = int(pick(rng, candidates))  # type: ignore[call-overload]
    matches = list(NUMBER.finditer(lines[i]))
    m = matches[int(rng.integers(len(matches)))]
    new = str(pick(rng, REPLACEMENTS))
    out = list(lines)
    out[i] = lines[i][: m.start()] + new + lines[i][m.end():]
    return out


def set_header(rng: np.random.Generator, lines: Lines) -> Lines:
    """Change (or add) DIMENSION, CAPACITY, EDGE_WEIGHT_TYPE or EDGE_WEIGHT_FORMAT."""
    key = str(pick(rng, list(HEADER_VALUES)))
    value = str(pick(rng, HEADER_VALUES[key]))
    out = list(lines)
    for i, line in enumerate(lines):
        if line.strip().upper().startswith(key) and "SECTION" not in line.upper():
            out[i] = f"{key} : {value}"
            return out
    return [f"{key} : {value}", *out] if rng.random() < 0.5 else [out[0], f"{key} : {value}", *out[1:]]


def ragged_row(rng: np.random.Generator, lines: Lines) -> Lines:
    """A data row gains or loses a value."""
    candidates = [i for i, line in enumerate(lines)
                  if line.split() and NUMBER.fullmatch(line.split()[0])]
    if not candidates:
        return lines
    i = int(pick(rng, candidates))  # type: ignore[call-overload]
    parts = lines[i].split()
    parts = parts[:-1] if rng.random() < 0.5 and len(parts) > 1 else [*parts, str(rng.integers(100))]
    out = list(lines)
    out[i] = " ".join(parts)
    return out


def giant_line(rng: np.random.Generator, lines: Lines) -> Lines:
    """A line of about 100 KB: numbers, letters or one long token."""
    kind = int(rng.integers(4))
    size = 100_000
    text = ["1 " * (size // 2), "x" * size, "9" * size, "NODE_COORD_SECTION " + "7 " * (size // 2)][kind]
    i = int(rng.integers(len(lines) + 1))
    return lines[:i] + [text] + lines[i:]


def scale_coords(rng: np.random.Generator, lines: Lines) -> Lines:
    """Every number on the data rows multiplied by a large factor (distances overflow)."""
    factor = float(pick(rng, [1e6, 1e8, 1e10, 1e20, 1e300]))
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and all(NUMBER.fullmatch(p) for p in parts):
            line = f"{parts[0]} {float(parts[1]) * factor:g} {float(parts[2]) * factor:g}"
        out.append(line)
    return out


def early_eof(rng: np.random.Generator, lines: Lines) -> Lines:
    i = int(rng.integers(len(lines) + 1))
    return lines[:i] + ["EOF"] + lines[i:]


def huge_dimension(rng: np.random.Generator, lines: Lines) -> Lines:
    out = [line for line in lines if not line.strip().upper().startswith("DIMENSION")]
    return [out[0], f"DIMENSION : {pick(rng, ['1000000000', '100000', '4294967297'])}", *out[1:]]


# Benign mutations keep the instance what it was: a reader that rejects the result is wrong.
SHUFFLED = ("NODE_COORD_SECTION", "DEMAND_SECTION", "TIME_WINDOW_SECTION", "SERVICE_TIME_SECTION",
            "PRIZE_SECTION")


def shuffle_rows(rng: np.random.Generator, lines: Lines) -> Lines:
    """The rows of one per-node section in another order (each keeps its node id)."""
    starts = [i for i, line in enumerate(lines) if line.strip().startswith(SHUFFLED)]
    if not starts:
        return lines
    start = int(pick(rng, starts)) + 1  # type: ignore[call-overload]
    end = start
    while end < len(lines) and lines[end].split() and NUMBER.fullmatch(lines[end].split()[0]):
        end += 1
    out = list(lines)
    out[start:end] = [lines[start + int(k)] for k in rng.permutation(end - start)]
    return out


def crlf(rng: np.random.Generator, lines: Lines) -> Lines:
    return [f"{line}\r" for line in lines]


def blank_lines(rng: np.random.Generator, lines: Lines) -> Lines:
    out = list(lines)
    for _ in range(int(rng.integers(1, 5))):
        out.insert(int(rng.integers(1, len(out) + 1)), " \t ")
    return out


def drop_eof(rng: np.random.Generator, lines: Lines) -> Lines:
    return [line for line in lines if line.strip() != "EOF"]


def float_format(rng: np.random.Generator, lines: Lines) -> Lines:
    """Integers on data rows written as floats (``12`` -> ``12.0``), columns separated by tabs."""
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) > 1 and all(NUMBER.fullmatch(p) for p in parts):
            line = "\t".join(f"{float(p):.1f}" for p in parts)
        out.append(line)
    return out


LINE_MUTATIONS: dict[str, Callable[[np.random.Generator, Lines], Lines]] = {
    "delete_line": delete_line, "duplicate_line": duplicate_line, "swap_lines": swap_lines,
    "replace_number": replace_number, "set_header": set_header, "ragged_row": ragged_row,
    "giant_line": giant_line, "scale_coords": scale_coords, "early_eof": early_eof,
    "huge_dimension": huge_dimension, "shuffle_rows": shuffle_rows, "crlf": crlf,
    "blank_lines": blank_lines, "drop_eof": drop_eof, "float_format": float_format,
}
BENIGN = {"shuffle_rows": 2, "crlf": 1, "blank_lines": 1, "drop_eof": 1, "float_format": 1}
WEIGHTS = {"delete_line": 2, "duplicate_line": 2, "swap_lines": 2, "replace_number": 6,
           "set_header": 4, "ragged_row": 3, "giant_line": 1, "scale_coords": 1, "early_eof": 1,
           "huge_dimension": 1, "truncate": 1, "binary_junk": 1, **BENIGN}


def truncate(rng: np.random.Generator, data: bytes) -> bytes:
    return data[: int(rng.integers(len(data) + 1))]


def binary_junk(rng: np.random.Generator, data: bytes) -> bytes:
    junk = rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8).tobytes()
    i = int(rng.integers(len(data) + 1))
    return data[:i] + junk + data[i:]


def mutate(seed: Seed, rng: np.random.Generator) -> tuple[bytes, list[str]]:
    """One to three mutations (only benign ones in a fifth of the cases) applied to ``seed``."""
    weights = BENIGN if rng.random() < 0.2 else WEIGHTS
    names = list(weights)
    p = np.array([weights[n] for n in names], float)
    chosen = [str(n) for n in rng.choice(names, int(rng.integers(1, 4)), p=p / p.sum())]
    lines = seed.text.split("\n")
    for name in chosen:
        if name in LINE_MUTATIONS:
            lines = LINE_MUTATIONS[name](rng, lines)
    data = "\n".join(lines).encode("utf-8")
    for name in chosen:
        if name == "truncate":
            data = truncate(rng, data)
        elif name == "binary_junk":
            data = binary_junk(rng, data)
    return data, chosen


# --- what the readers must reject (an oracle independent of routecli) ----------------------------

def _float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def bad_number(token: str, nonnegative: bool) -> bool:
    value = _float(token)
    if value is None:
        return False  # garbage the readers reject anyway (exit 2); not what this oracle is for
    return not math.isfinite(value) or abs(value) > MAGNITUDE or (nonnegative and value < 0)


def must_reject(text: str) -> str | None:
    """A reason the readers must reject ``text``, or ``None`` (no verdict)."""
    lines = text.splitlines()
    if any("VEHICLE" in line for line in lines[:4]) and not any(":" in line for line in lines[:6]):
        for line in lines[7:]:
            parts = line.split()
            for k, tok in enumerate(parts):
                if bad_number(tok, k >= 3):
                    return f"solomon value {tok!r}"
        return None
    section = ""
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        head = parts[0].rstrip(":").upper()
        if head == "EOF":
            break
        if head.endswith("_SECTION"):
            section = head
            continue
        if ":" in line:
            key, _, value = line.partition(":")
            if key.strip().upper() == "CAPACITY" and bad_number(value.strip(), True):
                return f"CAPACITY {value.strip()!r}"
            if key.strip().upper() == "CAPACITY" and _float(value.strip()) == 0:
                return "CAPACITY 0"
            section = ""
            continue
        if section in ("", "DEPOT_SECTION", "TOUR_SECTION"):
            continue
        values = parts if section == "EDGE_WEIGHT_SECTION" else parts[1:]
        nonnegative = section != "NODE_COORD_SECTION"
        for tok in values:
            if bad_number(tok, nonnegative):
                return f"{section} value {tok!r}"
    return None


# --- running one command in the worker ---------------------------------------------------------

def _capture(main: Callable[[list[str]], int], argv: list[str]) -> dict:
    """Run ``main(argv)`` with fds 1 and 2 redirected to files; exit code, output, exception."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        saved = os.dup(1), os.dup(2)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
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
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        return {"code": code, "stdout": out.read().decode("utf-8", "replace"),
                "stderr": err.read().decode("utf-8", "replace"), "exception": exc,
                "seconds": seconds}


def worker(conn: Connection) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    warnings.simplefilter("always")  # each run prints its warnings, as a fresh process would
    from routecli.cli.app import main

    while True:
        argv = conn.recv()
        if argv is None:
            return
        conn.send(_capture(main, argv))


class Runner:
    """One worker process at a time; killed and replaced after a timeout or a crash."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.ctx = mp.get_context("fork")
        self._start()

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=worker, args=(child,), daemon=True)
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


# --- classification ----------------------------------------------------------------------------

COST = re.compile(r"cost=(\S+)")
GAP = re.compile(r"gap=(-?[\d.,]+)%")


def check_solution(file: Path, out_dir: Path, stdout: str, sibling: bool) -> str | None:
    """Why a successful ``solve`` is wrong (cost, validation, re-cost, a negative gap to a
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


def classify(result: dict, command: str, file: Path, out_dir: Path, text: str,
             benign: bool, sibling: bool) -> tuple[str, str]:
    """Outcome name and a detail line for one run (``benign``: the mutations kept the instance;
    ``sibling``: the original best-known solution lies beside the file)."""
    if result.get("hang"):
        return "hang", ""
    if result["exception"]:
        return "traceback", result["exception"].strip().splitlines()[-1][:200]
    code, stderr = result["code"], result["stderr"].strip()
    lines = stderr.splitlines()
    written = out_dir.is_dir() and any(out_dir.iterdir())
    if code != 0 and written:
        return "output from failed run", stderr[:200]
    if code == 2 and benign:
        return "valid input rejected", stderr[:200]
    if code == 2:
        if len(lines) == 1 and len(lines[0]) <= MAX_ERROR_CHARS:
            return "clean error", lines[0][:200]
        return "unclean error", f"{len(lines)} lines, {len(stderr)} chars: {stderr[:150]!r}"
    if code != 0:
        return "other exit", f"exit {code}: {stderr[:200]}"
    if stderr:
        return "unclean error", f"exit 0 with stderr: {stderr[:150]!r}"
    reason = must_reject(text)
    if reason is None and command == "solve":
        try:
            reason = check_solution(file, out_dir, result["stdout"], sibling)
        except Exception as exc:  # the check itself read something the CLI accepted
            reason = f"check failed: {type(exc).__name__}: {str(exc)[:150]}"
    return ("invalid solved", reason) if reason else ("valid", "")


# --- driver ------------------------------------------------------------------------------------

def run_case(runner: Runner, seed: Seed, case: int, rng_seed: int, work: Path) -> dict:
    """Mutate, run ``info`` and ``solve``; one CSV row (details without the case folder)."""
    rng = np.random.default_rng([rng_seed, case])
    data, chosen = mutate(seed, rng)
    folder = work / f"case{case}"
    folder.mkdir()
    file = folder / seed.name
    file.write_bytes(data)
    sibling = False
    if seed.sibling is not None and rng.random() < 0.5:
        (folder / seed.sibling[0]).write_text(seed.sibling[1])
        sibling = True
    text = data.decode("utf-8", "replace")
    row: dict = {"case": case, "file": seed.name, "mutations": "+".join(chosen),
                 "sibling": int(sibling)}
    details = []
    for command in ("info", "solve"):
        out_dir = folder / "out"
        argv = ["info", str(file)] if command == "info" else \
            ["solve", str(file), "--model", "nn", "--out", str(out_dir)]
        result = runner.run(argv)
        outcome, detail = classify(result, command, file, out_dir, text,
                                   benign=all(m in BENIGN for m in chosen), sibling=sibling)
        row |= {command: outcome, f"{command}_exit": result.get("code", ""),
                f"{command}_seconds": f"{result['seconds']:.3f}"}
        detail = detail.replace(f"{folder}/", "").removeprefix("error: ")[:160]
        if detail and detail not in details:
            details.append(detail)
    row["detail"] = " | ".join(details)
    return row


def table(counts: Counter, total_runs: int, command_line: str, commit: str) -> str:
    head = f"`{command_line}` (commit {commit}, {total_runs // 2} cases, {total_runs} runs)\n\n"
    rows = ["| outcome | info | solve | total |", "|---|---:|---:|---:|"]
    for outcome in OUTCOMES:
        a, b = counts[("info", outcome)], counts[("solve", outcome)]
        rows.append(f"| {outcome} | {a} | {b} | {a + b} |")
    return head + "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=500, help="mutated files (two runs each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-root", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per run")
    parser.add_argument("--out", type=Path, default=None, help="CSV path")
    args = parser.parse_args()
    if not (args.data_root / "tsplib").is_dir():
        parser.error(f"no benchmark files under {args.data_root}")
    command_line = "python benchmarks/fuzz_inputs.py " + " ".join(sys.argv[1:])
    from routecli.store import git_commit

    commit = git_commit()
    out = args.out or ROOT / "benchmarks" / "results" / f"fuzz_inputs_s{args.seed}_n{args.cases}.csv"
    seeds = load_seeds(args.data_root)
    pick_rng = np.random.default_rng(args.seed)
    order = pick_rng.integers(len(seeds), size=args.cases)
    runner = Runner(args.timeout)
    counts: Counter = Counter()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="routecli-fuzz-") as tmp, out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["commit", "case", "file", "mutations", "sibling",
                                                "info", "info_exit", "info_seconds", "solve",
                                                "solve_exit", "solve_seconds", "detail"])
        writer.writeheader()
        warm = Path(tmp) / "warm"
        warm.mkdir()
        (warm / seeds[0].name).write_text(seeds[0].text)
        # Warm-up (imports, numba caches) before the first timed run.
        runner.run(["solve", str(warm / seeds[0].name), "--model", "nn", "--out", str(warm / "out")])
        for case in range(args.cases):
            row = run_case(runner, seeds[order[case]], case, args.seed, Path(tmp))
            counts[("info", row["info"])] += 1
            counts[("solve", row["solve"])] += 1
            writer.writerow({"commit": commit, **row})
            if (case + 1) % 250 == 0:
                fh.flush()
                print(f"{case + 1}/{args.cases} cases, {time.perf_counter() - start:.0f} s",
                      file=sys.stderr, flush=True)
    runner.close()
    print(table(counts, 2 * args.cases, command_line, commit))
    print(f"\nper-case rows: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    os.nice(10)
    main()
