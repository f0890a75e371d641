"""JSON lines that every strict parser reads: ``NaN`` and ``Infinity`` (which Python's ``json``
writes by default) become ``null``, the value a number has when it is undefined (a gap to a
best-known value of 0, say)."""

from __future__ import annotations

import json
import math
from typing import Any


def finite_or_null(value: Any) -> Any:
    """``value`` with every non-finite float, at any depth of dicts and lists, made ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_null(v) for v in value]
    return value


def dumps(value: Any, sort_keys: bool = False) -> str:
    """One line of strict JSON."""
    return json.dumps(finite_or_null(value), allow_nan=False, sort_keys=sort_keys)


def plain_number(value: Any) -> Any:
    """A numpy number as the Python number ``json`` writes (its ``default``)."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
