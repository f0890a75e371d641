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
from routecli.io.text import EXACT, check_values, magnitude_bound, parse, spec_number
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
    check_values(table, np.asarray(section.lines), "ITEM_SECTION", COLUMNS, source,
                 positive=("weight",), unit="item")
    name = spec["NAME"].value if "NAME" in spec and spec["NAME"].value else Path(source).stem
    return KPInstance(name, table[:, 0].copy(), table[:, 1].copy(), float(capacity))


def format_kp(name: str, comment: str, weights: np.ndarray, values: np.ndarray,
              capacity: float) -> str:
    """The ``.kp`` text of an instance; numbers are written so that they read back exactly."""
    rows = "\n".join(f"{float(w)!r} {float(v)!r}" for w, v in zip(weights, values, strict=True))
    return "\n".join([f"NAME : {name}", f"COMMENT : {comment}", "TYPE : KP",
                      f"ITEMS : {len(weights)}", f"CAPACITY : {float(capacity):g}",
                      "ITEM_SECTION", rows, "EOF"]) + "\n"
