"""A fast reader for the TSPLIB 95 format (``.tsp``, ``.tour``) and writers for tours.

tsplib95 parses line by line into Python objects and takes tens of seconds on ``pla85900``;
this reader splits the file into keyword blocks (:mod:`routecli.io.text`) and converts each
block with one numpy call. Supported: NODE_COORD_SECTION with EUC_2D, CEIL_2D, ATT, GEO (and
any coordinate file read with another ``round_rule``), EXPLICIT matrices in every TSPLIB
EDGE_WEIGHT_FORMAT. Every number is checked (finite, within :func:`magnitude_bound`, weights
non-negative with a zero diagonal and a symmetric full matrix) and an error names its line.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from routecli.errors import InstanceFormatError, display_path, excerpt
from routecli.io.text import (
    EXACT,
    Section,
    Spec,
    check_values,
    coordinate_metric,
    dimension,
    magnitude_bound,
    node_table,
    parse,
    read_text,
    spec_type,
)
from routecli.problems import Metric, TSPInstance

# What a symmetric TSP (and a tour file) may hold. CAPACITY, DEMAND and DEPOT belong to CVRP
# files, FIXED_EDGES constrains the tour: rather than ignore them, the parser refuses them.
SPEC_KEYS = {
    "NAME", "TYPE", "COMMENT", "DIMENSION", "EDGE_WEIGHT_TYPE", "EDGE_WEIGHT_FORMAT",
    "EDGE_DATA_FORMAT", "NODE_COORD_TYPE", "DISPLAY_DATA_TYPE",
}
SECTION_KEYS = {"NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION", "TOUR_SECTION"}
EDGE_WEIGHT_RULES = {"EUC_2D": "euc2d", "CEIL_2D": "ceil2d", "ATT": "att", "GEO": "geo",
                     "EXPLICIT": "explicit"}
# Row-wise upper == column-wise lower, and vice versa: both list the same index order.
# format -> (diagonal offset of the triangle, upper triangle?)
TRIANGLES = {
    "UPPER_ROW": (1, True), "LOWER_COL": (1, True), "UPPER_DIAG_ROW": (0, True),
    "LOWER_DIAG_COL": (0, True), "LOWER_ROW": (-1, False), "UPPER_COL": (-1, False),
    "LOWER_DIAG_ROW": (0, False), "UPPER_DIAG_COL": (0, False),
}
COORD_SECTIONS = ("NODE_COORD_SECTION", "DISPLAY_DATA_SECTION")  # the first one present is drawn
WRITER_MARK = "written by routecli"  # in every solution file routecli writes (see is_bks_source)


def node_coords(section: Section, n: int, source: str) -> tuple[np.ndarray, np.ndarray]:
    """``[n, 2]`` coordinates from rows ``id x y`` (ids 1..n in any order), each checked, and
    the line of each node's row ``[n]``."""
    coords, lines = node_table(section, n, ("x", "y"), source)
    check_values(coords, lines, section.name, ("x", "y"), source, nonnegative=False)
    return coords, lines


def values_needed(n: int, fmt: str, source: str) -> int:
    """How many numbers an EDGE_WEIGHT_SECTION of dimension ``n`` in ``fmt`` holds."""
    if fmt == "FULL_MATRIX":
        return n * n
    if fmt not in TRIANGLES:
        raise InstanceFormatError(f"{source}: unsupported EDGE_WEIGHT_FORMAT {excerpt(fmt)}")
    offset = TRIANGLES[fmt][0]
    return n * (n + 1) // 2 if offset == 0 else n * (n - 1) // 2


def _triangle(n: int, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of each number of a triangular section in ``fmt``."""
    offset, upper = TRIANGLES[fmt]
    return np.triu_indices(n, k=offset) if upper else np.tril_indices(n, k=offset)


def _position(n: int, fmt: str, k: int) -> tuple[int, int]:
    """0-based (row, column) of the ``k``-th number of a section in ``fmt``."""
    if fmt == "FULL_MATRIX":
        row, col = divmod(k, n)
        return row, col
    rows, cols = _triangle(n, fmt)
    return int(rows[k]), int(cols[k])


def _index(n: int, fmt: str, row: int, col: int) -> int:
    """Which number of a section in ``fmt`` holds entry (``row``, ``col``)."""
    if fmt == "FULL_MATRIX":
        return row * n + col
    rows, cols = _triangle(n, fmt)
    return int(np.flatnonzero((rows == row) & (cols == col))[0])


def explicit_matrix(values: np.ndarray, n: int, fmt: str, source: str) -> np.ndarray:
    """``[n, n]`` matrix from the numbers of an EDGE_WEIGHT_SECTION in format ``fmt`` (a
    triangle is mirrored; a full matrix is taken as it is).

    The count is checked against ``n`` by arithmetic before anything of size ``n`` is allocated,
    so a file declaring ``DIMENSION : 1000000000`` fails at once instead of exhausting memory.
    """
    fmt = fmt.upper()
    needed = values_needed(n, fmt, source)
    if values.size != needed:
        raise InstanceFormatError(
            f"{source}: {fmt} of dimension {n} needs {needed} values, got {values.size}")
    if fmt == "FULL_MATRIX":
        return values.reshape(n, n)
    rows, cols = _triangle(n, fmt)
    matrix = np.zeros((n, n))
    matrix[rows, cols] = values
    matrix[cols, rows] = values
    return matrix


def read_matrix(section: Section, n: int, fmt: str, source: str) -> np.ndarray:
    """The checked ``[n, n]`` matrix of an EDGE_WEIGHT_SECTION: every weight finite, >= 0 and
    within the magnitude bound, a zero diagonal, and a FULL_MATRIX symmetric (a symmetric
    problem read from an asymmetric matrix would cost a tour differently in each direction)."""
    fmt = fmt.upper()
    needed = values_needed(n, fmt, source)
    count = sum(len(row) for row in section.rows)  # before converting: a huge DIMENSION fails here
    if count != needed:
        raise InstanceFormatError(
            f"{source}: {section.where()}: {fmt} of dimension {n} needs {needed} values, got {count}")
    values = section.values(source)
    bound = magnitude_bound(n)
    bad = np.flatnonzero(~(np.abs(values) <= bound) | (values < 0))
    if bad.size:
        k = int(bad[0])
        value = float(values[k])
        why = ("it must be a finite number" if not np.isfinite(value) else
               "weights must be >= 0" if value < 0 else
               f"weights must be <= {bound:g} {EXACT}")
        raise InstanceFormatError(f"{source}: {_edge_text(section, n, fmt, k)} is {value:g}; {why}")
    matrix = explicit_matrix(values, n, fmt, source)
    diagonal = np.flatnonzero(np.diagonal(matrix))
    if diagonal.size:
        i = int(diagonal[0])
        k = _index(n, fmt, i, i)
        raise InstanceFormatError(f"{source}: {_edge_text(section, n, fmt, k)} is "
                                  f"{matrix[i, i]:g}; the diagonal must be 0")
    if fmt == "FULL_MATRIX" and not np.array_equal(matrix, matrix.T):
        i, j = (int(v) for v in np.argwhere(matrix != matrix.T)[0])
        raise InstanceFormatError(
            f"{source}: {section.where(section.row_of_value(i * n + j))}: FULL_MATRIX is not "
            f"symmetric: edge ({i + 1}, {j + 1}) weighs {matrix[i, j]:g}, edge ({j + 1}, {i + 1}) "
            f"{matrix[j, i]:g}")
    return matrix


def _edge_text(section: Section, n: int, fmt: str, k: int) -> str:
    """``line L: EDGE_WEIGHT_SECTION: weight of edge (i, j)`` for the ``k``-th number."""
    row, col = _position(n, fmt, k)
    return f"{section.where(section.row_of_value(k))}: weight of edge ({row + 1}, {col + 1})"


def edge_weight_rule(spec: dict[str, Spec], source: str, extra: tuple[str, ...] = ()) -> str:
    """``EDGE_WEIGHT_TYPE`` (upper case), one of the supported types or ``extra``."""
    if "EDGE_WEIGHT_TYPE" not in spec:
        raise InstanceFormatError(f"{source}: missing EDGE_WEIGHT_TYPE")
    ewt = spec["EDGE_WEIGHT_TYPE"].value.upper()
    if ewt not in EDGE_WEIGHT_RULES and ewt not in extra:
        raise InstanceFormatError(f"{source}: line {spec['EDGE_WEIGHT_TYPE'].line}: unsupported "
                                  f"EDGE_WEIGHT_TYPE {excerpt(ewt)}")
    return ewt


def explicit_metric(spec: dict[str, Spec], sections: dict[str, Section], n: int,
                    coords: np.ndarray | None, source: str) -> Metric:
    """The matrix of an EXPLICIT file, with the file's coordinates (if any) for plots and
    coordinate-based models."""
    if "EDGE_WEIGHT_SECTION" not in sections:
        raise InstanceFormatError(f"{source}: missing EDGE_WEIGHT_SECTION")
    fmt = spec["EDGE_WEIGHT_FORMAT"].value if "EDGE_WEIGHT_FORMAT" in spec else ""
    if not fmt:
        raise InstanceFormatError(f"{source}: missing EDGE_WEIGHT_FORMAT")
    matrix = read_matrix(sections["EDGE_WEIGHT_SECTION"], n, fmt, source)
    return Metric("explicit", coords=coords, matrix=matrix)


def instance_metric(spec: dict[str, Spec], sections: dict[str, Section], n: int, ewt: str,
                    round_rule: str | None, source: str) -> Metric:
    """The file's own metric, or coordinates under ``round_rule`` (an EXPLICIT file too, when it
    has a NODE_COORD_SECTION; without one ``--round`` has nothing to measure). Every coordinate
    section is checked, the display-only DISPLAY_DATA_SECTION too; a matrix in a coordinate file
    is refused rather than ignored."""
    tables = {key: node_coords(sections[key], n, source) for key in COORD_SECTIONS
              if key in sections}
    coords = {key: values for key, (values, _) in tables.items()}
    if ewt == "EXPLICIT" and round_rule is None:
        shown = next((coords[key] for key in COORD_SECTIONS if key in coords), None)
        return explicit_metric(spec, sections, n, shown, source)
    if ewt != "EXPLICIT" and "EDGE_WEIGHT_SECTION" in sections:
        raise InstanceFormatError(f"{source}: {sections['EDGE_WEIGHT_SECTION'].where()}: an edge "
                                  f"weight matrix contradicts EDGE_WEIGHT_TYPE {ewt}")
    if ewt == "EXPLICIT" and "NODE_COORD_SECTION" not in coords:
        raise InstanceFormatError(f"{source}: --round {round_rule} needs a NODE_COORD_SECTION; "
                                  "this file has only an EXPLICIT matrix")
    if "NODE_COORD_SECTION" not in coords:
        raise InstanceFormatError(f"{source}: missing NODE_COORD_SECTION")
    rule = round_rule or ("exact" if ewt == "EXACT_2D" else EDGE_WEIGHT_RULES[ewt])
    return coordinate_metric(rule, *tables["NODE_COORD_SECTION"], "NODE_COORD_SECTION", source)


def tsp_from_text(text: str, source: str, round_rule: str | None = None) -> TSPInstance:
    """A symmetric TSP from the text of a ``.tsp`` file; ``round_rule`` overrides its rule."""
    spec, sections = parse(text, source, SPEC_KEYS, SECTION_KEYS)
    kind = spec_type(spec, "TSP")
    if kind != "TSP":
        raise InstanceFormatError(f"{source}: TYPE {excerpt(kind)} is not a symmetric TSP")
    n = dimension(spec, source)
    ewt = edge_weight_rule(spec, source)
    name = spec["NAME"].value if "NAME" in spec and spec["NAME"].value else Path(source).stem
    return TSPInstance(name, instance_metric(spec, sections, n, ewt, round_rule, source))


def read_tour(path: str | Path, n: int | None = None) -> np.ndarray:
    """0-based node order from a TSPLIB ``.tour`` file (TOUR_SECTION, ends with -1). With ``n``
    (the instance's node count) every id must lie in 1..n and a DIMENSION, if given, must be
    ``n`` (a tour of another instance); whether each node appears once is for validation to
    report, as for routes. Without ``n`` the count must match the file's DIMENSION."""
    source = display_path(path)
    spec, sections = parse(read_text(path), source, SPEC_KEYS, SECTION_KEYS)
    if "TOUR_SECTION" not in sections:
        raise InstanceFormatError(f"{source}: missing TOUR_SECTION")
    if n is not None and "DIMENSION" in spec and dimension(spec, source) != n:
        raise InstanceFormatError(f"{source}: line {spec['DIMENSION'].line}: DIMENSION "
                                  f"{dimension(spec, source)} is not the instance's {n} nodes")
    section = sections["TOUR_SECTION"]
    values = section.values(source)
    cut = np.flatnonzero(values == -1)
    ids = values[: cut[0]] if cut.size else values
    top = n if n is not None else dimension(spec, source) if "DIMENSION" in spec else None
    bad = ~((ids == np.floor(ids)) & (ids >= 1) & (ids <= (top if top is not None else np.inf)))
    # an id is written in digits: '1e2' or '100.0' in range would otherwise name node 100
    tokens = itertools.islice(itertools.chain.from_iterable(section.rows), ids.size)
    bad |= ~np.fromiter((t.isascii() and t.isdigit() for t in tokens), bool, ids.size)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        allowed = f"1..{top}" if top is not None else "a positive integer"
        raise InstanceFormatError(f"{source}: {section.where(section.row_of_value(k))}: "
                                  f"{excerpt(section_token(section, k))} is not a node id in "
                                  f"{allowed}")
    order = ids.astype(np.int64) - 1
    if n is None and top is not None and order.size != top:
        raise InstanceFormatError(f"{source}: tour has {order.size} nodes, DIMENSION says {top}")
    return order


def section_token(section: Section, k: int) -> str:
    """The ``k``-th token of a section, as written."""
    row = section.row_of_value(k)
    before = sum(len(r) for r in section.rows[:row])
    return section.rows[row][k - before]


def format_tour(name: str, order: np.ndarray, cost: float) -> str:
    """A ``.tour`` of the 0-based node ``order`` (written 1-based)."""
    body = "\n".join(str(int(v) + 1) for v in order)
    return (f"NAME : {name}.tour\nCOMMENT : Length {cost:g}, {WRITER_MARK}\nTYPE : TOUR\n"
            f"DIMENSION : {len(order)}\nTOUR_SECTION\n{body}\n-1\nEOF\n")
