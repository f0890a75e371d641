"""The PE paper's findings, pair by pair, tested on a comparison run folder (``claims.md``).

Each pair its tables compare (:func:`routecli.experiments.pe.paper.paper_pairs`) is a claim: the
encoding with the lower paper gap is the better one. Ours, from the per-seed, per-instance gaps
of both (:mod:`routecli.experiments.stats`): the difference of the mean gaps (worse minus
better, in points) with its 95% interval (seeds and test instances resampled), Welch's t over
the per-seed gaps, that p corrected over every claim of the folder (Holm), and the wins and
losses over test instances (:func:`routecli.experiments.pe.summary.summarize`).

The verdict: *holds* when the corrected test names the paper's better encoding, *reversed* when
it names the other, *not separated* otherwise, including every pair with fewer than
:data:`~routecli.experiments.stats.MIN_SEEDS` seeds a side and every folder whose protocol is at
a ceiling (the imitation labeller of ``baselines.csv`` or the best encoding within 1% of the
references or at them on half of the instances, or no labeller row at all: nothing shows the
protocol could tell encodings apart); *pending* with one seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from routecli.atomic import atomic_write_text
from routecli.experiments import stats
from routecli.experiments.pe.pairs import baseline_store, row_store
from routecli.experiments.pe.paper import paper_gap_at, paper_pairs
from routecli.experiments.pe.protocol import Protocol
from routecli.experiments.pe.summary import Summary, fmt, instance_gaps, summarize, title
from routecli.experiments.stats import fmt_p

Verdict = Literal["holds", "reversed", "not separated", "pending"]
CORRECTION: stats.Correction = "holm"


@dataclass(frozen=True)
class Claim:
    """One pair: the paper's better and worse encoding, their paper gaps, ours, and the test
    of ours (``test.a``: the paper's better encoding)."""

    tables: str
    scale: str  # where the paper measured it, e.g. "CVRP-100"
    better: Summary  # ours, for the encoding the paper finds better
    worse: Summary  # ours, paired against ``better`` (wins: instances where ``better`` wins)
    paper_better: float
    paper_worse: float
    test: stats.Comparison
    room: Room | None  # how far the labeller and the best encoding are from the references

    @property
    def difference(self) -> float:
        """Our worse-minus-better gap, in points: positive where the paper's order holds."""
        return self.test.effect

    @property
    def verdict(self) -> Verdict:
        if self.test.verdict == "pending":
            return "pending"
        if self.room is None or not self.room.separates:
            return "not separated"
        if self.test.verdict == "a":
            return "holds"
        return "reversed" if self.test.verdict == "b" else "not separated"


@dataclass(frozen=True)
class Room:
    """Whether a folder's protocol leaves room to separate encodings: the imitation labeller
    (``epsilon-teacher`` of ``baselines.csv``) and the best encoding (per-instance gaps averaged
    over its seeds) must both stay measurably above the references."""

    labeller: stats.Ceiling
    best: stats.Ceiling
    best_pe: str

    @property
    def separates(self) -> bool:
        return self.labeller.separates and self.best.separates


def room(out: Path, gaps: dict[str, dict[int, np.ndarray]]) -> Room | None:
    """The :class:`Room` of ``out`` (``None`` without a labeller row or encoding rows)."""
    row = baseline_store(out).get(row="epsilon-teacher")
    if row is None or not gaps:
        return None
    means = {pe: np.mean(list(seeds.values()), axis=0) for pe, seeds in gaps.items()}
    best = min(means, key=lambda pe: float(means[pe].mean()))
    return Room(stats.Ceiling(float(row["gap_pct"]), float(row["at_reference"])),
                stats.ceiling(means[best]), best)


def claims(protocol: Protocol, out: Path) -> list[Claim]:
    """Every pair the paper compares whose two encodings both have rows in ``out``, tested
    together (one correction over the folder's claims)."""
    present = {r["pe"] for r in row_store(out / "rows.csv").rows}
    oriented = []
    for tables, a, b in paper_pairs(protocol.problem, protocol.backbone):
        paper_a = paper_gap_at(a, protocol.problem, protocol.backbone, protocol.size)
        paper_b = paper_gap_at(b, protocol.problem, protocol.backbone, protocol.size)
        if not ({a, b} <= present and paper_a and paper_b) or paper_a[1] == paper_b[1]:
            continue
        if paper_b[1] < paper_a[1]:
            a, b, paper_a, paper_b = b, a, paper_b, paper_a
        oriented.append((tables, a, b, paper_a, paper_b))
    ours = {}  # one summary per better encoding, paired against each of its worse ones
    for a in dict.fromkeys(a for _, a, _, _, _ in oriented):
        worse = list(dict.fromkeys(b for _, x, b, _, _ in oriented if x == a))
        ours[a] = {s.pe: s for s in summarize(protocol, out, [a, *worse], versus=a)}
    gaps = instance_gaps(out)
    tests = stats.compare({pe: np.stack(list(seeds.values())) for pe, seeds in gaps.items()},
                          [(a, b) for _, a, b, _, _ in oriented], CORRECTION)
    space = room(out, gaps)
    return [Claim(tables, paper_a[0], ours[a][a], ours[a][b], paper_a[1], paper_b[1], test, space)
            for (tables, a, b, paper_a, paper_b), test in zip(oriented, tests, strict=True)]


def markdown(protocol: Protocol, found: list[Claim], command: str) -> str:
    """The claims as a Markdown table, with the protocol's ceiling check and the command that
    rebuilds it."""
    def ours(s: Summary) -> str:
        return f"{fmt(s.gap)} ± {fmt(s.gap_sd)} ({s.seeds})"

    lines = []
    for c in found:
        w, t = c.worse, c.test
        tested = "-" if w.wins is None else f"{w.wins}/{w.losses}"
        lines.append(
            f"| {c.tables} | {c.better.title} better than {w.title} | "
            f"{c.paper_better:.2f} vs {c.paper_worse:.2f}% ({c.scale}) | "
            f"{ours(c.better)} vs {ours(w)}% | {t.effect:+.2f} [{t.ci_low:+.2f}, "
            f"{t.ci_high:+.2f}] | {tested} | {fmt_p(t.p)} | {fmt_p(t.p_adjusted)} | "
            f"{c.verdict} |")
    space = found[0].room if found else None
    if space is None:
        ceiling = ("No labeller row (baselines.csv): nothing shows this protocol can separate "
                   "encodings, so no pair gets a verdict.")
    else:
        lab, best = space.labeller, space.best
        ceiling = (f"The imitation labeller: gap {lab.gap:.2f}%, {lab.at_reference:.0%} of the "
                   f"test instances at the reference; the best encoding ({title(space.best_pe)})"
                   f": {best.gap:.2f}%, {best.at_reference:.0%} at it: "
                   + ("room to separate encodings." if space.separates else
                      f"a ceiling (a verdict needs both at a gap of at least {lab.min_gap:g}% "
                      f"with fewer than {lab.max_at_reference:.0%} of the instances at the "
                      "reference), so no pair gets a verdict."))
    return (f"The PE paper's findings, pair by pair, on {protocol.problem.upper()}-"
            f"{protocol.size} ({protocol.backbone.upper()} backbone, budget {protocol.budget}). "
            f"Gaps: mean ± sd (seeds); difference: worse minus better, in points, with its 95% "
            f"interval (seeds and test instances resampled; positive: the paper's order); "
            f"instances: where the paper's better encoding wins / loses; p: Welch's t over the "
            f"per-seed gaps, then Holm-corrected over the {len(found)} pairs. Verdict: holds or "
            f"reversed when the corrected p is below {stats.ALPHA}, the interval excludes 0 and "
            f"both sides have at least {stats.MIN_SEEDS} seeds; else not separated; pending with "
            f"one seed. {ceiling}\n\n"
            "| Table | the paper finds | paper gaps | ours | difference [95% CI] | instances | "
            "p | Holm p | verdict |\n|---|---|---|---|---|---|---|---|---|\n"
            + "\n".join(lines) + f"\n\n```sh\n{command}\n```\n")


def report(protocol: Protocol, out: Path, command: str) -> str:
    """Write ``claims.md`` in ``out``; returns its Markdown ('' where no pair has rows)."""
    found = claims(protocol, out)
    if not found:
        return ""
    text = markdown(protocol, found, command)
    atomic_write_text(out / "claims.md", text)
    return text
