"""Mutated benchmark files: the seeds (small real TSPLIB / CVRPLIB X files and EXPLICIT, VRPTW,
PCVRP and Solomon files derived from them), the mutations applied to them (one to three per case,
with a fixed seed: lines deleted, duplicated or swapped; numbers replaced by NaN, inf, -1, huge
values or garbage; truncation; new DIMENSION / CAPACITY / EDGE_WEIGHT_TYPE / EDGE_WEIGHT_FORMAT;
ragged rows; binary junk; giant lines; scaled coordinates; and benign changes a reader must
accept), and an oracle, independent of routecli's readers, of what must be rejected."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

MAGNITUDE = 1e9  # the readers' bound on coordinates, weights, demands, times and prizes
Lines = list[str]
T = TypeVar("T")


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


def pick(rng: np.random.Generator, items: Sequence[T]) -> T:
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
    i = int(pick(rng, candidates))
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
    i = int(pick(rng, candidates))
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
    start = int(pick(rng, starts)) + 1
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
