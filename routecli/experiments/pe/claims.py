"""The PE paper's findings, pair by pair, tested on a comparison run folder (``claims.md``).

Each pair its tables compare (:func:`routecli.experiments.pe.paper.paper_pairs`) is a claim: the
encoding with the lower paper gap is the better one. Ours is the difference of the mean gaps
over seeds, with its standard error, the paired test over test instances and Welch's t over
the per-seed gaps (:func:`routecli.experiments.pe.summary.summarize`). The verdict is the seed-level
test's: a difference in the paper's direction with p < :data:`ALPHA` *holds*, one in the other
direction is *reversed*, anything else is *not separated*; a pair with a single seed on either
side is *pending*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from routecli.atomic import atomic_write_text
from routecli.experiments.pe.pairs import row_store
from routecli.experiments.pe.paper import paper_gap_at, paper_pairs
from routecli.experiments.pe.protocol import Protocol
from routecli.experiments.pe.summary import Summary, fmt, fmt_p, summarize

ALPHA = 0.05
Verdict = Literal["holds", "reversed", "not separated", "pending"]


@dataclass(frozen=True)
class Claim:
    """One pair: the paper's better and worse encoding, their paper gaps, ours."""

    tables: str
    scale: str  # where the paper measured it, e.g. "CVRP-100"
    better: Summary  # ours, for the encoding the paper finds better
    worse: Summary  # ours, paired against ``better`` (wins: instances where ``better`` wins)
    paper_better: float
    paper_worse: float

    @property
    def difference(self) -> float:
        """Our worse-minus-better gap, in points: positive where the paper's order holds."""
        return self.worse.gap - self.better.gap

    @property
    def standard_error(self) -> float:
        """Of :attr:`difference`, from the seed spreads (NaN with a single seed)."""
        return math.sqrt(self.better.gap_sd ** 2 / self.better.seeds
                         + self.worse.gap_sd ** 2 / self.worse.seeds)

    @property
    def verdict(self) -> Verdict:
        p = self.worse.seed_p
        if min(self.better.seeds, self.worse.seeds) < 2:
            return "pending"
        if p is None or p >= ALPHA:
            return "not separated"
        return "holds" if self.difference > 0 else "reversed"


def claims(protocol: Protocol, out: Path) -> list[Claim]:
    """Every pair the paper compares whose two encodings both have rows in ``out``."""
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
    return [Claim(tables, paper_a[0], ours[a][a], ours[a][b], paper_a[1], paper_b[1])
            for tables, a, b, paper_a, paper_b in oriented]


def markdown(protocol: Protocol, found: list[Claim], command: str) -> str:
    """The claims as a Markdown table, with the command that rebuilds it."""
    def ours(s: Summary) -> str:
        return f"{fmt(s.gap)} ± {fmt(s.gap_sd)} ({s.seeds})"

    lines = []
    for c in found:
        w = c.worse
        tested = "-" if w.wins is None else f"{w.wins}/{w.losses} ({fmt_p(w.p_value)})"
        lines.append(
            f"| {c.tables} | {c.better.title} better than {w.title} | "
            f"{c.paper_better:.2f} vs {c.paper_worse:.2f}% ({c.scale}) | "
            f"{ours(c.better)} vs {ours(w)}% | {c.difference:+.2f} ± {fmt(c.standard_error)} | "
            f"{tested} | {fmt_p(w.seed_p)} | {c.verdict} |")
    return (f"The PE paper's findings, pair by pair, on {protocol.problem.upper()}-"
            f"{protocol.size} ({protocol.backbone.upper()} backbone, budget {protocol.budget}). "
            f"Gaps: mean ± sd (seeds); difference: worse minus better, in points, ± its standard "
            f"error (positive: the paper's order); instances: where the paper's better encoding "
            f"wins / loses (Wilcoxon p); verdict by the seed-level Welch p: below {ALPHA} in the "
            f"paper's direction holds, in the other reversed, else not separated; pending with "
            f"one seed.\n\n"
            "| Table | the paper finds | paper gaps | ours | difference ± se | instances | "
            "seed-level p | verdict |\n|---|---|---|---|---|---|---|---|\n"
            + "\n".join(lines) + f"\n\n```sh\n{command}\n```\n")


def report(protocol: Protocol, out: Path, command: str) -> str:
    """Write ``claims.md`` in ``out``; returns its Markdown ('' where no pair has rows)."""
    found = claims(protocol, out)
    if not found:
        return ""
    text = markdown(protocol, found, command)
    atomic_write_text(out / "claims.md", text)
    return text
