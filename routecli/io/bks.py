"""Best-known solution values: ``--bks``, a published solution file beside the instance, or a
packaged registry of TSPLIB optima and CVRPLIB X/AGS values.

A best-known value is only meaningful for the exact instance it was found on, so neither source
is trusted by name alone:

- ``bks.csv`` holds, per instance, the published value (verified against the public solution
  files; CVRPLIB values as of May 2024), the distance rule it is for (``euc2d`` for CVRPLIB,
  the file's EDGE_WEIGHT_TYPE for TSPLIB: the ``CEIL_2D`` optima of dsj1000, pla7397, pla33810
  and pla85900 are for the ceiling rule), and the instance's
  :func:`~routecli.problems.fingerprint.fingerprint`. A registry value is used only when the
  name, size, distance rule and fingerprint all match, so ``--round att`` on X-n101-k25, or
  other coordinates (or the same nodes renumbered) under a registry name, get no BKS instead
  of a meaningless gap.
- A sibling solution (``X.sol`` beside ``X.vrp``, ``X.opt.tour`` / ``X.tour`` beside ``X.tsp``)
  is re-costed under the instance's rule and validated, and used only when the instance is read
  under the file's own rule (the solution is best-known for that rule, not for a ``--round``
  override) and, for a ``.sol`` that states its ``Cost``, when the re-costed value agrees (a
  disagreement means the file was written for another instance or rule). Files routecli wrote
  itself are never best-known sources (:func:`~routecli.io.solutions.written_by_routecli`), and a
  sibling that cannot be read, does not validate or disagrees is ignored, so a stray file never
  blocks a solve.
"""

from __future__ import annotations

import math
from pathlib import Path

from routecli.errors import InstanceFormatError
from routecli.io.cvrplib import is_solomon
from routecli.io.files import INSTANCE_SUFFIXES
from routecli.io.registry import registry
from routecli.io.solutions import read_solution_and_cost, written_by_routecli
from routecli.io.text import header_value, read_text
from routecli.io.tsplib import EDGE_WEIGHT_RULES
from routecli.problems import Instance, KPInstance, validate
from routecli.problems.fingerprint import fingerprint

# A stated Cost may be rounded (to cents, for the float costs of Solomon-style instances).
STATED_COST_TOLERANCE = 0.01


def declared_rule(path: str | Path) -> str | None:
    """The distance rule the instance file declares (from its header), ``None`` if unknown."""
    try:
        text = read_text(path)
    except InstanceFormatError:
        return None
    if is_solomon(text):
        return "exact"
    ewt = header_value(text, "EDGE_WEIGHT_TYPE").upper()
    return "exact" if ewt == "EXACT_2D" else EDGE_WEIGHT_RULES.get(ewt)


def _solution_suffixes(problem: str) -> tuple[str, ...]:
    return (".opt.tour", ".tour") if problem in ("tsp", "pdtsp") else (".sol",)


def sibling_solution(path: str | Path, problem: str) -> Path | None:
    """``X.opt.tour`` / ``X.tour`` (TSP, PDTSP) or ``X.sol`` next to instance file ``X.*``, unless
    routecli wrote it."""
    p = Path(path)
    for candidate in (p.with_suffix(s) for s in _solution_suffixes(problem)):
        if candidate.is_file() and not written_by_routecli(candidate):
            return candidate
    return None


def is_bks_source(path: str | Path) -> bool:
    """Whether ``best_known`` would read ``path`` as the best-known solution of an instance file
    beside it: an existing ``.sol`` / ``.tour`` / ``.opt.tour`` that routecli did not write,
    next to an instance file of the same stem ``X`` (``X.tsp``, ``X.vrp``, ``X.txt``: the
    suffixes ``bench`` takes from a folder). It does not open the instance, so a ``.sol`` beside
    a TSP file counts too: refusing to overwrite it is harmless.
    """

    p = Path(path)
    if not p.is_file() or written_by_routecli(p):
        return False
    stems = [p.name[: -len(s)] for s in (".opt.tour", ".tour", ".sol") if p.name.endswith(s)]
    return any((p.parent / f"{stem}{suffix}").is_file()
               for stem in stems if stem for suffix in INSTANCE_SUFFIXES)


def _recost(sibling: Path, instance: Instance) -> float | None:
    """The cost of a sibling solution under the instance's rule; ``None`` if it cannot be read,
    does not validate, or states a ``Cost`` its routes do not have on this instance (it was
    written for another instance or rule: the ``.vrp`` was edited, say)."""
    try:
        solution, stated = read_solution_and_cost(sibling, instance)
    except InstanceFormatError:
        return None
    if validate(instance, solution):
        return None
    cost = float(instance.cost(solution))  # type: ignore[arg-type]
    if stated is not None and not math.isclose(stated, cost, rel_tol=1e-9, abs_tol=STATED_COST_TOLERANCE):
        return None
    return cost


def best_known(instance: Instance, path: str | Path | None = None,
               given: float | None = None) -> tuple[float | None, str]:
    """Best-known value and where it came from (``"--bks"``, the sibling file's name,
    ``"registry"``), or ``(None, "")``: see the module docstring for when each source counts."""
    if given is not None:
        return given, "--bks"
    if isinstance(instance, KPInstance):  # no distance rule, no registry: a sibling .sol only
        sibling = sibling_solution(path, "kp") if path is not None else None
        value = _recost(sibling, instance) if sibling is not None else None
        return (value, sibling.name) if value is not None and sibling is not None else (None, "")
    rule = instance.metric.rule
    if path is not None and declared_rule(path) == rule:
        sibling = sibling_solution(path, instance.problem)
        value = _recost(sibling, instance) if sibling is not None else None
        if value is not None:
            return value, sibling.name  # type: ignore[union-attr]
    entry = registry().get(instance.name)
    if (entry is not None and entry.n == instance.size and entry.rule == rule
            and entry.fingerprint == fingerprint(instance)):
        return entry.value, "registry"
    return None, ""
