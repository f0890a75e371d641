"""0-1 knapsack files (``.kp``): a ``KEY : value`` header and one ``weight value`` line per item.

The layout (``routecli generate kp --format file`` writes it)::

    NAME : kp-200-c25-s0-0
    COMMENT : anything
    TYPE : KP                 # optional
    ITEMS : 200               # the number of item lines that follow
    CAPACITY : 25
    ITEM_SECTION
    0.6369616873214543 0.2697867137638703     # weight value of item 1
    ...
    EOF                       # optional

Items are numbered 1..ITEMS in file order (solution files list the chosen ones by these ids).
Weights must be > 0 and values >= 0, the capacity > 0, every number finite; an item heavier
than the capacity is allowed (it never fits). Errors name the line and the field.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from routecli.errors import InstanceFormatError, excerpt
from routecli.io.text import EXACT, magnitude_bound, parse, spec_number
from routecli.problems import KPInstance

SPEC_KEYS = {"NAME", "COMMENT", "TYPE", "ITEMS", "CAPACITY"}
SECTION_KEYS = {"ITEM_SECTION"}
COLUMNS = ("weight", "value")
MAX_ITEMS = 2**31  # far above any file that fits in memory; keeps ITEMS an int64 size


def kp_from_text(text: str, source: str) -> KPInstance:
    spec, sections = parse(text, source, SPEC_KEYS, SECTION_KEYS)
    if "TYPE" in spec and spec["TYPE"].value.split()[:1] != ["KP"]:
        raise InstanceFormatError(f"{source}: line {spec['TYPE'].line}: TYPE "
                                  f"{excerpt(spec['TYPE'].value)} is not KP")
    count, count_line = spec_number(spec, "ITEMS", source)
    if not (np.isfinite(count) and count == np.floor(count) and 1 <= count <= MAX_ITEMS):
        raise InstanceFormatError(f"{source}: line {count_line}: ITEMS must be a positive "
                                  f"integer, got {excerpt(spec['ITEMS'].value)}")
    n = int(count)
    capacity, cap_line = spec_number(spec, "CAPACITY", source)
    if not 0 < capacity <= magnitude_bound(n):
        raise InstanceFormatError(f"{source}: line {cap_line}: CAPACITY is {capacity:g}; it must "
                                  f"be > 0 and <= {magnitude_bound(n):g} {EXACT}")
    if "ITEM_SECTION" not in sections:
        raise InstanceFormatError(f"{source}: missing ITEM_SECTION")
    section = sections["ITEM_SECTION"]
    if len(section.rows) != n:
        raise InstanceFormatError(f"{source}: {section.where()} has {len(section.rows)} items, "
                                  f"ITEMS says {n}")
    table = section.table(2, "weight value", source)
    _check_items(table, section.lines, source)
    name = spec["NAME"].value if "NAME" in spec and spec["NAME"].value else Path(source).stem
    return KPInstance(name, table[:, 0].copy(), table[:, 1].copy(), float(capacity))


def _check_items(table: np.ndarray, lines: list[int], source: str) -> None:
    """Every weight finite and > 0, every value finite and >= 0, both within the bound."""
    bound = magnitude_bound(len(table))
    weight, value = table[:, 0], table[:, 1]
    bad = ~np.isfinite(table) | (np.abs(table) > bound)
    bad[:, 0] |= weight <= 0
    bad[:, 1] |= value < 0
    if not bad.any():
        return
    i, col = (int(k) for k in np.argwhere(bad)[0])
    number, field = float(table[i, col]), COLUMNS[col]
    where = f"{source}: line {lines[i]}: ITEM_SECTION: {field} of item {i + 1} is {number:g}"
    if not np.isfinite(number):
        raise InstanceFormatError(f"{where}; it must be a finite number")
    if col == 0 and number <= 0:
        raise InstanceFormatError(f"{where}; weights must be > 0")
    if col == 1 and number < 0:
        raise InstanceFormatError(f"{where}; values must be >= 0")
    raise InstanceFormatError(f"{where}; |{field}| must be <= {bound:g} {EXACT}")


def format_kp(name: str, comment: str, weights: np.ndarray, values: np.ndarray,
              capacity: float) -> str:
    """The ``.kp`` text of an instance; numbers are written so that they read back exactly."""
    rows = "\n".join(f"{float(w)!r} {float(v)!r}" for w, v in zip(weights, values, strict=True))
    return "\n".join([f"NAME : {name}", f"COMMENT : {comment}", "TYPE : KP",
                      f"ITEMS : {len(weights)}", f"CAPACITY : {float(capacity):g}",
                      "ITEM_SECTION", rows, "EOF"]) + "\n"
