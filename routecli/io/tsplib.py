"""A fast reader for the TSPLIB 95 format (``.tsp``, ``.tour``) and writers for tours.

tsplib95 parses line by line into Python objects and takes tens of seconds on ``pla85900``;
this reader splits the file into keyword blocks and converts each block with one numpy call.
Supported: NODE_COORD_SECTION with EUC_2D, CEIL_2D, ATT, GEO (and float files read with
``round_rule="exact"``), EXPLICIT matrices in every TSPLIB EDGE_WEIGHT_FORMAT.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from routecli.errors import InstanceFormatError
from routecli.problems import Metric, TSPInstance

SPEC_KEYS = {
    "NAME", "TYPE", "COMMENT", "DIMENSION", "CAPACITY", "EDGE_WEIGHT_TYPE", "EDGE_WEIGHT_FORMAT",
    "EDGE_DATA_FORMAT", "NODE_COORD_TYPE", "DISPLAY_DATA_TYPE",
}
SECTION_KEYS = {
    "NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION", "TOUR_SECTION",
    "DEMAND_SECTION", "DEPOT_SECTION", "FIXED_EDGES_SECTION", "EDGE_DATA_SECTION",
}
EDGE_WEIGHT_RULES = {"EUC_2D": "euc2d", "CEIL_2D": "ceil2d", "ATT": "att", "GEO": "geo",
                     "EXPLICIT": "explicit"}


def read_text(path: str | Path) -> str:
    """File contents as text; a clear error for missing, empty or binary files."""
    p = Path(path)
    if not p.is_file():
        raise InstanceFormatError(f"{p}: no such file")
    raw = p.read_bytes()
    if not raw.strip():
        raise InstanceFormatError(f"{p}: the file is empty")
    if b"\x00" in raw[:4096]:
        raise InstanceFormatError(f"{p}: binary data, not a TSPLIB/VRPLIB text file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return raw.decode("latin-1")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes any byte string
            raise InstanceFormatError(f"{p}: not a text file") from None


def parse(text: str, source: str) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Split TSPLIB text into its specification (``KEY: value``) and numeric sections."""
    spec: dict[str, str] = {}
    sections: dict[str, np.ndarray] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line:
            continue
        key, sep, value = line.partition(":")
        key = key.strip().upper()
        if key == "EOF":
            break
        if key in SECTION_KEYS:
            start = i
            while i < len(lines) and not _starts_keyword(lines[i]):
                i += 1
            block = " ".join(lines[start:i]).split()
            try:
                sections[key] = np.array(block, dtype=np.float64)
            except ValueError:
                bad = next(tok for tok in block if not _is_number(tok))
                raise InstanceFormatError(
                    f"{source}: non-numeric value {bad!r} in {key}") from None
            continue
        if key in SPEC_KEYS:
            spec[key] = value.strip().strip('"')
            continue
        if not sep:
            raise InstanceFormatError(
                f"{source}: line {i}: expected 'KEY : value' or a section name, got {line[:40]!r}")
        raise InstanceFormatError(f"{source}: unknown field {key!r} (line {i})")
    return spec, sections


def _starts_keyword(line: str) -> bool:
    s = line.lstrip()
    return bool(s) and (s[0].isalpha() or s[0] == "_")


def _is_number(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def dimension(spec: dict[str, str], source: str) -> int:
    if "DIMENSION" not in spec:
        raise InstanceFormatError(f"{source}: missing DIMENSION")
    try:
        n = int(spec["DIMENSION"])
    except ValueError:
        raise InstanceFormatError(
            f"{source}: DIMENSION must be an integer, got {spec['DIMENSION']!r}") from None
    if n < 1:
        raise InstanceFormatError(f"{source}: DIMENSION must be positive, got {n}")
    return n


def node_coords(sections: dict[str, np.ndarray], n: int, source: str) -> np.ndarray:
    """``[n, 2]`` coordinates from NODE_COORD_SECTION (``id x y`` rows, ids 1..n)."""
    if "NODE_COORD_SECTION" not in sections:
        raise InstanceFormatError(f"{source}: missing NODE_COORD_SECTION")
    flat = sections["NODE_COORD_SECTION"]
    if flat.size % 3 or flat.size // 3 != n:
        rows = flat.size / 3
        raise InstanceFormatError(
            f"{source}: NODE_COORD_SECTION has {rows:g} rows of 'id x y', DIMENSION says {n}")
    table = flat.reshape(n, 3)
    ids = table[:, 0].astype(np.int64)
    if not np.array_equal(np.sort(ids), np.arange(1, n + 1)):
        raise InstanceFormatError(f"{source}: node ids in NODE_COORD_SECTION are not 1..{n}")
    coords = np.empty((n, 2))
    coords[ids - 1] = table[:, 1:]
    return coords


def explicit_matrix(values: np.ndarray, n: int, fmt: str, source: str) -> np.ndarray:
    """``[n, n]`` symmetric matrix from an EDGE_WEIGHT_SECTION in format ``fmt``."""
    fmt = fmt.upper()
    if fmt == "FULL_MATRIX":
        if values.size != n * n:
            raise InstanceFormatError(
                f"{source}: FULL_MATRIX of dimension {n} needs {n * n} values, got {values.size}")
        return values.reshape(n, n)
    # Row-wise upper == column-wise lower, and vice versa: both list the same index order.
    layouts = {
        "UPPER_ROW": (1, True), "LOWER_COL": (1, True), "UPPER_DIAG_ROW": (0, True),
        "LOWER_DIAG_COL": (0, True), "LOWER_ROW": (-1, False), "UPPER_COL": (-1, False),
        "LOWER_DIAG_ROW": (0, False), "UPPER_DIAG_COL": (0, False),
    }
    if fmt not in layouts:
        raise InstanceFormatError(f"{source}: unsupported EDGE_WEIGHT_FORMAT {fmt!r}")
    offset, upper = layouts[fmt]
    rows, cols = np.triu_indices(n, k=offset) if upper else np.tril_indices(n, k=offset)
    if values.size != rows.size:
        raise InstanceFormatError(
            f"{source}: {fmt} of dimension {n} needs {rows.size} values, got {values.size}")
    matrix = np.zeros((n, n))
    matrix[rows, cols] = values
    matrix[cols, rows] = values
    return matrix


def read_tour(path: str | Path, n: int | None = None) -> np.ndarray:
    """0-based node order from a TSPLIB ``.tour`` file (TOUR_SECTION, ends with -1)."""
    source = str(path)
    spec, sections = parse(read_text(path), source)
    if "TOUR_SECTION" not in sections:
        raise InstanceFormatError(f"{source}: missing TOUR_SECTION")
    seq = sections["TOUR_SECTION"].astype(np.int64)
    cut = np.flatnonzero(seq == -1)
    order = (seq[: cut[0]] if cut.size else seq) - 1
    expected = n if n is not None else int(spec.get("DIMENSION", order.size))
    if order.size != expected:
        raise InstanceFormatError(f"{source}: tour has {order.size} nodes, expected {expected}")
    return order


def format_tour(name: str, order: np.ndarray, cost: float) -> str:
    body = "\n".join(str(int(v) + 1) for v in order)
    return (f"NAME : {name}.tour\nCOMMENT : Length {cost:g} (routecli)\nTYPE : TOUR\n"
            f"DIMENSION : {len(order)}\nTOUR_SECTION\n{body}\n-1\nEOF\n")


def read_tsp(path: str | Path, round_rule: str | None = None) -> TSPInstance:
    """A symmetric TSP from a ``.tsp`` file; ``round_rule`` overrides the file's rule."""
    source = str(path)
    spec, sections = parse(read_text(path), source)
    kind = spec.get("TYPE", "TSP").split()[0].upper() if spec.get("TYPE") else "TSP"
    if kind != "TSP":
        raise InstanceFormatError(f"{source}: TYPE {kind!r} is not a symmetric TSP")
    n = dimension(spec, source)
    ewt = spec.get("EDGE_WEIGHT_TYPE", "").upper()
    if not ewt:
        raise InstanceFormatError(f"{source}: missing EDGE_WEIGHT_TYPE")
    if ewt not in EDGE_WEIGHT_RULES:
        raise InstanceFormatError(f"{source}: unsupported EDGE_WEIGHT_TYPE {ewt!r}")
    name = spec.get("NAME") or Path(path).stem
    if ewt == "EXPLICIT":
        if "EDGE_WEIGHT_SECTION" not in sections:
            raise InstanceFormatError(f"{source}: missing EDGE_WEIGHT_SECTION")
        fmt = spec.get("EDGE_WEIGHT_FORMAT", "")
        if not fmt:
            raise InstanceFormatError(f"{source}: missing EDGE_WEIGHT_FORMAT")
        matrix = explicit_matrix(sections["EDGE_WEIGHT_SECTION"], n, fmt, source)
        coords = (node_coords(sections, n, source) if "NODE_COORD_SECTION" in sections
                  else None)
        return TSPInstance(name, Metric("explicit", coords=coords, matrix=matrix))
    coords = node_coords(sections, n, source)
    return TSPInstance(name, Metric(round_rule or EDGE_WEIGHT_RULES[ewt], coords=coords))
