"""The PE paper's side of the controlled comparison: which encodings each table compares, and
the numbers it reports for them.

- The PE lists of the tables (:func:`named_lists`, :func:`pe_list`, :func:`expand_pes`):
  Table 4 (the fourteen encodings of Layer 1), Table 10 (IPE and XPE ablation), Table 11
  (per-route XPE aggregates), Table 12 (direction-aware vs direction-invariant IPE+XPE) and
  Table 6 (N2S's own PE vs IPE+XPE, Layer 3). The IPE is the paper's printed formula
  (:func:`printed`) in the variant of Section 5.2 (:func:`ours`): direction-invariant for the
  reversal-symmetric CVRP, direction-aware otherwise; routecli's harmonic IPE
  (:func:`harmonic`) is one extra row of Table 4, an ablation.
- The pairs its tables compare (:func:`paper_pairs`): IPE+XPE against every other encoding of
  a table, and Table 10's distance-indexed IPE against the index-based one.
- The paper's values (Obj., Gap %) keyed by :func:`paper_key` (:data:`PAPER_TABLE4`, covering Tables
  4 and 10-12 at CVRP-100, VRPTW-100 and PDTSP-51; :data:`PAPER_TABLE6` at PDTSP-21/51/101) and
  the references they are gaps to (:func:`paper_value`, :func:`paper_reference`).
"""

from __future__ import annotations

from routecli.errors import OptionError
from routecli.improve.model import parse_pe
from routecli.pe.registry import PE_REGISTRY

AGGREGATES = ("mean", "circular", "demand", "median", "midpoint")  # Table 11's rows


IPE_FAMILY = ("ipe", "ipe_inv", "ipe_index", "ipe_inv_index", "ipe_xpe", "ipe_inv_xpe")


def printed(pe: str) -> str:
    """``pe`` (an IPE-family spec) with the paper's printed IPE formula: the geometric schedule
    ``w_k = 10000^(-2k/D)`` with flat amplitudes (:mod:`routecli.pe.routing`)."""
    return f"{pe}{',' if ':' in pe else ':'}schedule=geometric"


def harmonic(problem: str) -> tuple[str, str]:
    """The IPE and IPE+XPE registry names the paper uses for ``problem``, with routecli's
    default IPE (integer harmonics, ``1/k`` amplitudes: exactly circular and, direction-
    invariant, exactly reversal-invariant; not the formula the paper printed)."""
    return ("ipe_inv", "ipe_inv_xpe") if problem == "cvrp" else ("ipe", "ipe_xpe")


def ours(problem: str) -> tuple[str, str]:
    """The paper's IPE and IPE+XPE for ``problem`` (Section 5.2: direction-invariant for the
    reversal-symmetric CVRP, direction-aware otherwise) with the formula it printed."""
    ipe, full = harmonic(problem)
    return printed(ipe), printed(full)


def named_lists(problem: str) -> dict[str, list[str]]:
    """The named PE lists, every IPE with the paper's printed formula (:func:`ours`):
    ``table4`` (= ``all``; plus routecli's harmonic IPE+XPE as one extra row, an ablation),
    ``table10``, ``table11``, ``table12``, ``table6`` (N2S's own PE vs HA-N2S's IPE+XPE),
    ``ipe-formula`` (the two formulas side by side: both directions, alone and with XPE, plus
    integer harmonics with flat amplitudes) and ``tables10-12-harmonic`` (the IPE variants of
    Tables 10-12 with routecli's harmonic IPE)."""
    ipe_h, full_h = harmonic(problem)
    ipe, full = ours(problem)
    aggregates = [f"{full_h}:xpe_aggregate={a}" for a in AGGREGATES]
    lists = {
        "table4": ["nope", "ape", "sin", "rope", "rpe", "alibi", "lap", "rwse", "spd", "dact",
                   "cycleformer", ipe, "xpe", full, full_h],
        "table10": ["nope", ipe, printed(f"{ipe_h}_index"), "xpe", full],
        "table11": [printed(pe) for pe in aggregates] + [full],
        "table12": [printed("ipe_xpe"), printed("ipe_inv_xpe")],
        "table6": ["n2s", printed("ipe_xpe")],
        "ipe-formula": ["ipe_inv", "ipe_inv:schedule=geometric", "ipe", "ipe:schedule=geometric",
                        "ipe_inv_xpe", "ipe_inv_xpe:amplitude=flat",
                        "ipe_inv_xpe:schedule=geometric", "ipe_xpe", "ipe_xpe:schedule=geometric"],
        "tables10-12-harmonic": list(dict.fromkeys(
            [ipe_h, f"{ipe_h}_index", *aggregates, full_h, "ipe_xpe", "ipe_inv_xpe"])),
    }
    lists["all"] = lists["table4"]
    return lists


def pe_list(name: str, problem: str) -> list[str]:
    """One of :func:`named_lists`; ``KeyError`` for any other name."""
    return named_lists(problem)[name]


def paper_pairs(problem: str, backbone: str) -> list[tuple[str, str, str]]:
    """``(tables, ours, other)``: the pairs of encodings the paper's tables compare, with the
    tables that list both (``"4, 10"``); the problem's IPE+XPE against every other encoding,
    plus Table 10's IPE against its index-based variant. N2S: Table 6 only."""
    if backbone == "n2s":
        return [("6", printed("ipe_xpe"), "n2s")]
    ipe, full = ours(problem)
    names = ("table4", "table10", "table11", "table12")
    pairs = [(full, pe) for name in names for pe in pe_list(name, problem)
             if pe != full and paper_key(pe) is not None]
    pairs.append((ipe, printed(f"{harmonic(problem)[0]}_index")))
    out = []
    for a, b in dict.fromkeys(pairs):
        tables = [n.removeprefix("table") for n in names
                  if {a, b} <= set(pe_list(n, problem))]
        out.append((", ".join(tables), a, b))
    return out


def expand_pes(spec: str, problem: str) -> list[str]:
    """``all``, a table name or a comma list of PE specs and table names, in order, unique.
    A ``key=value`` item after ``NAME:key=value`` is one more option of that PE, so
    ``ipe_inv_xpe:xpe_aggregate=mean,schedule=geometric,sin`` names two encodings."""
    items: list[str] = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        if "=" in item and ":" not in item and items and ":" in items[-1]:
            items[-1] += "," + item
        else:
            items.append(item)
    out: list[str] = []
    for item in items:
        try:
            names = pe_list(item.lower(), problem)
        except KeyError:
            try:
                parse_pe(item)
            except (KeyError, ValueError) as err:
                raise OptionError(f"--pe {item!r}: {err}; use {', '.join(named_lists(problem))} "
                                  f"or names from {', '.join(PE_REGISTRY)}, n2s") from None
            names = [item]
        out += [n for n in names if n not in out]
    if not out:
        raise OptionError("--pe names no encoding")
    return out


# The paper's numbers (Obj., Gap %) at CVRP-100, VRPTW-100, PDTSP-51 (Tables 4, 10-12) and
# PDTSP-21/51/101 (Table 6), keyed by paper_key of our PE spec.
PAPER_TABLE4 = {
    "nope": {"cvrp": (17.42, 11.81), "vrptw": (29.99, 17.96), "pdtsp": (7.95, 15.86)},
    "ape": {"cvrp": (16.34, 4.88), "vrptw": (27.05, 6.40), "pdtsp": (7.20, 4.93)},
    "sin": {"cvrp": (16.45, 5.58), "vrptw": (27.34, 7.54), "pdtsp": (7.27, 5.95)},
    "rope": {"cvrp": (16.42, 5.39), "vrptw": (27.22, 7.07), "pdtsp": (7.24, 5.51)},
    "rpe": {"cvrp": (16.30, 4.62), "vrptw": (27.00, 6.20), "pdtsp": (7.18, 4.63)},
    "alibi": {"cvrp": (16.40, 5.26), "vrptw": (27.30, 7.39), "pdtsp": (7.26, 5.80)},
    "lap": {"cvrp": (15.91, 2.12), "vrptw": (26.55, 4.43), "pdtsp": (7.07, 3.06)},
    "rwse": {"cvrp": (16.06, 3.08), "vrptw": (26.79, 5.38), "pdtsp": (7.13, 3.94)},
    "spd": {"cvrp": (15.86, 1.80), "vrptw": (26.41, 3.88), "pdtsp": (7.05, 2.74)},
    "dact": {"cvrp": (15.95, 2.37), "vrptw": (26.58, 4.55), "pdtsp": (7.05, 2.84)},
    "cycleformer": {"cvrp": (15.94, 2.31), "vrptw": (26.55, 4.43), "pdtsp": (7.05, 2.74)},
    "ipe": {"vrptw": (26.32, 3.53), "pdtsp": (7.01, 2.16)},
    "ipe_inv": {"cvrp": (15.81, 1.48)},
    "xpe": {"cvrp": (15.84, 1.67), "vrptw": (26.27, 3.33), "pdtsp": (7.02, 2.30)},
    "ipe_xpe": {"cvrp": (15.78, 1.28), "vrptw": (26.18, 2.97), "pdtsp": (6.99, 1.87)},
    "ipe_inv_xpe": {"cvrp": (15.76, 1.16), "vrptw": (26.45, 4.04), "pdtsp": (7.12, 3.71)},
    "ipe_inv_index": {"cvrp": (16.18, 3.85)},
    **{f"ipe_inv_xpe:xpe_aggregate={a}": {"cvrp": v} for a, v in zip(
        AGGREGATES, [(15.83, 1.61), (15.82, 1.54), (15.83, 1.61), (15.84, 1.67), (15.85, 1.73)],
        strict=True)},
    **{f"ipe_xpe:xpe_aggregate={a}": {"vrptw": v} for a, v in zip(
        AGGREGATES, [(26.30, 3.46), (26.27, 3.34), (26.31, 3.50), (26.32, 3.54), (26.34, 3.62)],
        strict=True)},
}
# Table 4's reference objectives: HGS on CVRP-100 and VRPTW-100, LKH on PDTSP-51
PAPER_REFERENCE = {"cvrp": 15.58, "vrptw": 25.42, "pdtsp": 6.87}
PAPER_TABLE6_REFERENCE = {21: 4.563, 51: 6.862, 101: 9.428}  # LKH (10k), Table 6
PAPER_TABLE6 = {  # PDTSP-size: (Obj., Gap %) with 3k steps; the reference is LKH (10k)
    "n2s": {21: (4.565, 0.05), 51: (7.027, 2.40), 101: (9.846, 4.44)},
    "ipe_xpe": {21: (4.564, 0.03), 51: (6.997, 1.96), 101: (9.701, 2.89)},
}


def paper_key(pe: str) -> str | None:
    """The key of the paper's row that ``pe`` reproduces: an IPE-family spec only with the
    printed formula (``schedule=geometric``, then left out of the key), any other as it is;
    ``None`` for routecli's own variants (the harmonic IPE, other schedules or amplitudes)."""
    if pe.partition(":")[0] not in IPE_FAMILY:
        return pe
    key, options = parse_pe(pe)
    if options.pop("schedule", None) != "geometric" or "amplitude" in options:
        return None
    return key + "".join(f"{':' if k == 0 else ','}{name}={value}"
                         for k, (name, value) in enumerate(options.items()))


def paper_value(pe: str, problem: str, backbone: str, size: int) -> tuple[float, float] | None:
    """The paper's (Obj., Gap %) for ``pe``: Table 6 for the N2S backbone (per PDTSP size),
    else Table 4 and its ablations (per problem); ``None`` where the paper has none."""
    key = paper_key(pe)
    if key is None:
        return None
    if backbone == "n2s":
        return PAPER_TABLE6.get(key, {}).get(size)
    return PAPER_TABLE4.get(key, {}).get(problem)


def paper_gap_at(pe: str, problem: str, backbone: str, size: int) -> tuple[str, float] | None:
    """The paper's gap for ``pe`` with the scale it was measured at (``"CVRP-100"``): Table 4's
    problem size, or Table 6's PDTSP size nearest ``size``."""
    key = paper_key(pe)
    if key is None:
        return None
    if backbone == "n2s":
        sizes = PAPER_TABLE6.get(key)
        if not sizes:
            return None
        nearest = min(sizes, key=lambda s: (abs(s - size), s))
        return f"PDTSP-{nearest}", sizes[nearest][1]
    value = PAPER_TABLE4.get(key, {}).get(problem)
    scale = {"cvrp": "CVRP-100", "vrptw": "VRPTW-100", "pdtsp": "PDTSP-51"}[problem]
    return None if value is None else (scale, value[1])


def paper_reference(problem: str, backbone: str, size: int) -> float | None:
    """The paper's reference objective for the table this protocol reproduces."""
    if backbone == "n2s":
        return PAPER_TABLE6_REFERENCE.get(size)
    return PAPER_REFERENCE.get(problem)
