"""The text of instance files: reading it safely, splitting TSPLIB / VRPLIB files into numbered
specification lines and data sections, and checks that name the line of a bad number.

TSPLIB and VRPLIB share one layout (``KEY : value`` lines, then ``NAME_SECTION`` blocks of
numbers), so one parser serves both. It keeps the line number of every data row, which is what
lets an error say ``line 214: DEMAND_SECTION: demand of node 17 is -3``; a block is converted
with one numpy call, so reading stays fast on the largest files (pla85900, Flanders2).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from routecli.errors import InstanceFormatError, display_path, excerpt
from routecli.io.sources import no_such_file
from routecli.problems import Metric

# Largest |value| of a coordinate, edge weight, demand, capacity, time or prize. A solution of an
# n-node instance has at most 2n edges (one-customer routes), each at most 2*sqrt(2)*bound + 1
# long, so bounding values by 2^53 / (6 n) keeps every distance and every sum of them exact in
# float64 and far inside int64 (what PyVRP rounds to); 1e9 satisfies that up to 1.5 million nodes.
MAX_MAGNITUDE = 1e9
EXACT = "so costs, loads and times stay exact in float64/int64"  # the reason, in error messages


def magnitude_bound(n: int) -> float:
    """Largest accepted |value| of any number of an ``n``-node instance (see ``MAX_MAGNITUDE``)."""
    return min(MAX_MAGNITUDE, float(2**53 // (6 * max(n, 1))))


BOM = "\ufeff"  # a UTF-8 byte-order mark some editors write first


def _checked_path(path: str | Path) -> str:
    """The name of ``path`` for messages, once it is known to be a file."""
    p = Path(path)
    shown = display_path(p)
    if p.is_dir():
        raise InstanceFormatError(f"{shown}: is a folder, not an instance file")
    if not p.is_file():
        raise no_such_file(p)
    return shown


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # decodes any byte string; numbers are ASCII either way


def read_text(path: str | Path) -> str:
    """File contents as text (without a byte-order mark, every line ending a ``\\n``: CR LF of
    Windows and the lone CR of classic Mac files alike); a clear error for missing, empty or
    binary files and folders."""
    shown = _checked_path(path)
    raw = Path(path).read_bytes()
    if not raw.strip():
        raise InstanceFormatError(f"{shown}: the file is empty")
    if b"\x00" in raw:
        raise InstanceFormatError(f"{shown}: binary data, not a TSPLIB/VRPLIB text file")
    return _decode(raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")).removeprefix(BOM)


def text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a file read one line at a time (a solution file may be
    hundreds of MB), with the checks of :func:`read_text`; an empty file fails at its end."""
    shown = _checked_path(path)
    blank = True
    number = 0
    with open(path, "rb") as fh:
        for raw in fh:
            # a lone CR ends a line too (classic Mac files): such a file is one "line" here
            pieces = raw.rstrip(b"\n").removesuffix(b"\r").split(b"\r") if b"\r" in raw \
                else [raw]
            del raw  # one copy of a long line at a time
            for piece in pieces:
                number += 1
                if b"\x00" in piece:
                    raise InstanceFormatError(f"{shown}: line {number}: binary data, not a "
                                              "text file")
                line = _decode(piece)
                if number == 1:
                    line = line.removeprefix(BOM)
                blank = blank and not line.strip()
                yield number, line
    if blank:
        raise InstanceFormatError(f"{shown}: the file is empty")


def header_value(text: str, key: str) -> str:
    """The value of the ``KEY : value`` line among the specification lines before the first
    data section (``""`` without one). One pass over the lines: a header padded with blank lines
    or long comments costs what its length costs."""
    for line in text.split("\n"):
        head, colon, value = line.partition(":")
        head = head.strip().upper()
        if head.endswith("_SECTION") or head.split()[:1] == ["EOF"]:
            break
        if colon and head == key:
            return value.strip()
    return ""


def spec_type(spec: dict[str, Spec], default: str = "") -> str:
    """The first word of a parsed file's ``TYPE``, upper case (``default`` without one)."""
    words = spec["TYPE"].value.split() if "TYPE" in spec else []
    return words[0].upper() if words else default


def declared_type(text: str) -> str:
    """The first word of the file's ``TYPE``, upper case (``""`` without one)."""
    words = header_value(text, "TYPE").split()
    return words[0].upper() if words else ""


# A number as files write it: ASCII digits, a sign, a point, an exponent; nan and inf (any case)
# too, so that the checks name them. Python's float() also takes "1_0" and non-ASCII digits.
_NUMBER = re.compile(r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|infinity)",
                     re.IGNORECASE | re.ASCII)
_INTEGER = re.compile(r"[-+]?[0-9]+")


def is_number_token(token: str) -> bool:
    """Whether ``token`` is a number as a data file writes one (see ``_NUMBER``)."""
    return _NUMBER.fullmatch(token) is not None


def parse_number(token: str, where: str, source: str) -> float:
    """``token`` as a float; ``where`` (``line L: FIELD``) names it in the error."""
    if not is_number_token(token):
        raise InstanceFormatError(f"{source}: {where} must be a number, got {excerpt(token)}")
    return float(token)


@dataclass(frozen=True)
class Section:
    """One ``NAME_SECTION`` block: its header line and its non-empty data rows."""

    name: str
    line: int  # 1-based line number of the header
    lines: list[int]  # line number of each data row
    rows: list[list[str]]  # whitespace-separated tokens of each data row

    def where(self, row: int | None = None) -> str:
        """``line L: NAME`` for data row ``row`` (the header line when ``None``)."""
        return f"line {self.line if row is None else self.lines[row]}: {self.name}"

    def values(self, source: str) -> np.ndarray:
        """All numbers of the block in file order, as one flat float64 array."""
        tokens = list(itertools.chain.from_iterable(self.rows))
        if not all(map(is_number_token, tokens)):
            self._raise_non_numeric(source)
        return np.array(tokens, dtype=np.float64)

    def table(self, width: int, layout: str, source: str) -> np.ndarray:
        """``[rows, width]`` numbers; every row must hold exactly ``width`` values."""
        for k, row in enumerate(self.rows):
            if len(row) != width:
                raise InstanceFormatError(
                    f"{source}: {self.where(k)}: expected {width} values {layout!r}, got {len(row)}")
        return self.values(source).reshape(len(self.rows), width)

    def row_of_value(self, index: int) -> int:
        """Data row holding the ``index``-th number of the block (rows may hold any count)."""
        ends = np.cumsum([len(row) for row in self.rows])
        return int(np.searchsorted(ends, index, side="right"))

    def _raise_non_numeric(self, source: str) -> NoReturn:
        for k, row in enumerate(self.rows):
            for token in row:
                if not is_number_token(token):
                    raise InstanceFormatError(
                        f"{source}: {self.where(k)}: non-numeric value {excerpt(token)}")
        raise InstanceFormatError(f"{source}: {self.where()}: a value is not a number")


@dataclass(frozen=True)
class Spec:
    """A ``KEY : value`` line."""

    value: str
    line: int


def parse(text: str, source: str, spec_keys: set[str],
          section_keys: set[str]) -> tuple[dict[str, Spec], dict[str, Section]]:
    """Split TSPLIB/VRPLIB text into its specification lines and data sections.

    A line with a colon is a specification (``NAME_SECTION :`` headers aside); a line whose
    first word ends in ``_SECTION`` starts a section; ``EOF`` ends the file; any other line is a
    data row of the current section (so a stray word inside a section is reported as a
    non-numeric value on its line). Keys and sections outside ``spec_keys`` / ``section_keys``,
    repeated ones (COMMENT aside) and rows outside a section are errors.
    """
    spec: dict[str, Spec] = {}
    sections: dict[str, Section] = {}
    current: Section | None = None
    for number, raw in enumerate(text.split("\n"), start=1):
        words = raw.split()
        if not words:
            continue
        key, colon, value = raw.partition(":")
        head = (key if colon else words[0]).strip().upper()
        if head == "EOF":
            break
        if head.endswith("_SECTION"):
            rest = value if colon else raw.strip()[len(words[0]):]
            current = _new_section(head, number, rest, sections, section_keys, source)
        elif colon:
            current = None
            _add_spec(head, value, number, spec, spec_keys, source)
        elif current is not None:
            current.lines.append(number)
            current.rows.append(words)
        else:
            raise InstanceFormatError(f"{source}: line {number}: expected 'KEY : value' or a "
                                      f"section name, got {excerpt(raw.strip())}")
    return spec, sections


def _new_section(name: str, number: int, rest: str, sections: dict[str, Section],
                 section_keys: set[str], source: str) -> Section:
    if name not in section_keys:
        raise InstanceFormatError(f"{source}: line {number}: unsupported section {excerpt(name)}")
    if name in sections:
        raise InstanceFormatError(f"{source}: line {number}: {name} appears twice "
                                  f"(first at line {sections[name].line})")
    if rest.strip():
        raise InstanceFormatError(f"{source}: line {number}: unexpected text after {name}: "
                                  f"{excerpt(rest.strip())}")
    sections[name] = Section(name, number, [], [])
    return sections[name]


def _add_spec(key: str, value: str, number: int, spec: dict[str, Spec], spec_keys: set[str],
              source: str) -> None:
    if key not in spec_keys:
        raise InstanceFormatError(f"{source}: line {number}: unknown field {excerpt(key)}")
    if key in spec and key != "COMMENT":  # comments may run over several lines (usa13509)
        raise InstanceFormatError(f"{source}: line {number}: {key} appears twice "
                                  f"(first at line {spec[key].line})")
    spec[key] = Spec(value.strip().strip('"').strip(), number)


def spec_number(spec: dict[str, Spec], key: str, source: str) -> tuple[float, int]:
    """The value of ``KEY : number`` and its line; an error names a missing or non-numeric one."""
    if key not in spec:
        raise InstanceFormatError(f"{source}: missing {key}")
    entry = spec[key]
    return parse_number(entry.value, f"line {entry.line}: {key}", source), entry.line


def dimension(spec: dict[str, Spec], source: str) -> int:
    """``DIMENSION``: an integer of at least 2 (one node has no edge to measure)."""
    if "DIMENSION" not in spec:
        raise InstanceFormatError(f"{source}: missing DIMENSION")
    entry = spec["DIMENSION"]
    if _INTEGER.fullmatch(entry.value) is None:
        raise InstanceFormatError(f"{source}: line {entry.line}: DIMENSION must be an integer, "
                                  f"got {excerpt(entry.value)}")
    n = int(entry.value)
    if n < 2:
        raise InstanceFormatError(
            f"{source}: line {entry.line}: DIMENSION must be at least 2, got {n}")
    return n


def first_row(mask: np.ndarray) -> int | None:
    """The index of the first true entry of ``mask`` (the first offending row), if any."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def check_values(values: np.ndarray, row_lines: np.ndarray, section: str, columns: tuple[str, ...],
                 source: str, *, first_id: int = 1, nonnegative: bool = True,
                 positive: tuple[str, ...] = (), unit: str = "node") -> None:
    """Every entry of ``values`` ``[n, len(columns)]`` (row = node, or item) finite, within the
    magnitude bound, when ``nonnegative`` at least 0 and in the ``positive`` columns above 0;
    the first offender names its line, column and row (file ids start at ``first_id``)."""
    bound = magnitude_bound(len(values))
    bad = ~np.isfinite(values) | (np.abs(values) > bound)
    if nonnegative:
        bad |= values < 0
    for col, name in enumerate(columns):
        if name in positive:
            bad[:, col] |= values[:, col] <= 0
    if not bad.any():
        return
    row, col = (int(k) for k in np.argwhere(bad)[0])
    value, name = float(values[row, col]), columns[col]
    where = f"{source}: line {row_lines[row]}: {section}: {name} of {unit} {row + first_id} is {value:g}"
    if not np.isfinite(value):
        raise InstanceFormatError(f"{where}; it must be a finite number")
    if name in positive and value <= 0:
        raise InstanceFormatError(f"{where}; {name} must be > 0")
    if nonnegative and value < 0:
        raise InstanceFormatError(f"{where}; {name} must be >= 0")
    raise InstanceFormatError(f"{where}; |{name}| must be <= {bound:g} {EXACT}")


# GEO coordinates are DDD.MM (degrees, then minutes as the first two decimals): within these
# degrees of latitude (x) and longitude (y), or not a place on the TSPLIB sphere.
GEO_LIMITS = (90.0, 180.0)


def coordinate_metric(rule: str, coords: np.ndarray, node_lines: np.ndarray, section: str,
                      source: str, first_id: int = 1) -> Metric:
    """The metric of checked coordinates ``[n, 2]`` under ``rule``; for ``geo`` (the file's
    EDGE_WEIGHT_TYPE or ``--round geo``) each must be a latitude and a longitude."""
    if rule == "geo":
        degrees = np.trunc(coords) + 5.0 * (coords - np.trunc(coords)) / 3.0
        bad = np.abs(degrees) > np.array(GEO_LIMITS)
        if bad.any():
            node, col = (int(k) for k in np.argwhere(bad)[0])
            what = ("latitude", "longitude")[col]
            raise InstanceFormatError(
                f"{source}: line {node_lines[node]}: {section}: {what} of node {node + first_id} "
                f"is {coords[node, col]:g}; GEO coordinates are DDD.MM degrees within "
                f"±{GEO_LIMITS[col]:g}")
    return Metric(rule, coords=coords)


def check_single_depot(sections: dict[str, Section], source: str) -> None:
    """One depot, node 1 (the default when DEPOT_SECTION is absent)."""
    if "DEPOT_SECTION" not in sections:
        return
    section = sections["DEPOT_SECTION"]
    values = section.values(source)
    depots = values[: np.flatnonzero(values == -1)[0]] if (values == -1).any() else values
    if depots.size != 1 or depots[0] != 1:
        shown = " ".join(f"{v:g}" for v in depots[:5]) or "none"
        raise InstanceFormatError(f"{source}: {section.where()}: only a single depot at node 1 is "
                                  f"supported, got {shown}")


def node_table(section: Section, n: int, columns: tuple[str, ...], source: str,
               first_id: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``id v1 .. vk`` for ids ``first_id .. first_id + n - 1`` in any order: the values by
    node ``[n, k]`` and the line of each node's row ``[n]``."""
    if len(section.rows) != n:
        raise InstanceFormatError(f"{source}: {section.where()} has {len(section.rows)} rows, "
                                  f"DIMENSION says {n}")
    layout = " ".join(("id", *columns))
    table = section.table(len(columns) + 1, layout, source)
    ids = table[:, 0]
    wrong = np.flatnonzero((ids != np.floor(ids)) | (ids < first_id) | (ids >= first_id + n))
    if wrong.size:
        k = int(wrong[0])
        raise InstanceFormatError(f"{source}: {section.where(k)}: node id {ids[k]:g} is not an "
                                  f"integer in {first_id}..{first_id + n - 1}")
    index = ids.astype(np.int64) - first_id
    if np.bincount(index, minlength=n).max() > 1:  # n ids in range: a repeat iff not a permutation
        _, first = np.unique(index, return_index=True)
        k = int(np.setdiff1d(np.arange(n), first)[0])
        earlier = int(np.flatnonzero(index == index[k])[0])
        raise InstanceFormatError(f"{source}: {section.where(k)}: node id {index[k] + first_id} "
                                  f"appears twice (also line {section.lines[earlier]})")
    values = np.empty((n, len(columns)))
    values[index] = table[:, 1:]
    lines = np.empty(n, np.int64)
    lines[index] = section.lines
    return values, lines
