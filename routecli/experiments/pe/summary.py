"""The summary of a controlled-comparison run folder: statistics, the Markdown table and the
plot (``<stem>.md``, ``<stem>.png``), our numbers beside the PE paper's (Tables 4, 6, 10-12).

Per PE (:func:`summarize`): the mean and the sample standard deviation over seeds of the
per-seed mean objective and gap (the tables' Obj. and Gap % columns); the paired comparison with
the reference PE, IPE+XPE (:func:`routecli.experiments.pe.protocol.versus_pe`), over test instances
(wins, losses and the Wilcoxon signed-rank p of the per-instance cost differences, costs
averaged over the seeds both have); Welch's t over the per-seed gaps (whether the difference
exceeds seed-to-seed noise); and the paper's values (:mod:`routecli.experiments.pe.paper`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from routecli.atomic import atomic_write_text
from routecli.experiments.pe.pairs import baseline_store, row_store
from routecli.experiments.pe.paper import IPE_FAMILY, paper_reference, paper_value
from routecli.experiments.pe.protocol import PLUMBING_CHECK, Protocol, plumbing_check, versus_pe
from routecli.experiments.stats import fmt_p
from routecli.improve.imitation import ImitationConfig
from routecli.improve.model import parse_pe
from routecli.pe.registry import PE_REGISTRY
from routecli.plots.figure import save_png
from routecli.problems import gap
from routecli.results import read_csv

BASELINE_TITLES = {"random": "a random allowed move per step",
                   "teacher": "best improvement (the teacher)",
                   "epsilon-teacher": "the imitation labeller (epsilon-greedy teacher)"}


@dataclass(frozen=True)
class Summary:
    """One PE's line: means and sample standard deviations over seeds of the per-seed mean
    objective and gap; paired comparison with the reference PE over test instances (costs
    averaged over the seeds both have); the paper's values."""

    pe: str
    title: str
    seeds: int
    obj: float
    obj_sd: float
    gap: float
    gap_sd: float
    wins: int | None = None  # instances where the reference PE is better
    losses: int | None = None
    p_value: float | None = None
    seed_p: float | None = None  # Welch's t over per-seed gaps: is the PE gap beyond seed noise?
    paper: tuple[float, float] | None = None


def spread(values: np.ndarray) -> float:
    """Sample standard deviation (NaN for one value)."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def title(pe: str) -> str:
    """The encoding's table name: the paper's IPE formula as the paper names it, routecli's
    integer-harmonic IPE marked; other options than the XPE aggregate follow as ``k=v``."""
    key, options = parse_pe(pe)
    base = "N2S CPE" if pe == "n2s" else PE_REGISTRY[key].title
    aggregate = options.pop("xpe_aggregate", None)
    integer_ipe = key in IPE_FAMILY and "schedule" not in options
    if key in IPE_FAMILY and options.get("schedule") == "geometric" and "amplitude" not in options:
        del options["schedule"]  # the paper's printed formula reads as the paper's name
    if aggregate:
        base = f"{base.split(' (')[0]}, per-route XPE: {aggregate}"
    if integer_ipe:
        base += " [routecli's integer-harmonic IPE]"
    if options:
        base += " [" + ", ".join(f"{k}={v}" for k, v in options.items()) + "]"
    return base


def instance_costs(out: Path) -> dict[str, dict[int, np.ndarray]]:
    """``costs.csv`` of a run folder: PE -> seed -> cost per test instance (NaN where
    missing)."""
    instances = len(read_csv(out / "reference.csv"))
    costs: dict[str, dict[int, np.ndarray]] = {}
    for r in read_csv(out / "costs.csv"):
        per_seed = costs.setdefault(r["pe"], {})
        per_seed.setdefault(int(r["seed"]), np.full(instances, np.nan))[int(r["instance"])] \
            = float(r["cost"])
    return costs


def instance_gaps(out: Path) -> dict[str, dict[int, np.ndarray]]:
    """PE -> seed -> gap (%) per test instance, for the (PE, seed) pairs with a row."""
    reference = np.array([float(r["cost"]) for r in read_csv(out / "reference.csv")])
    costs = instance_costs(out)
    out_gaps: dict[str, dict[int, np.ndarray]] = {}
    for r in row_store(out / "rows.csv").rows:
        seed = int(r["seed"])
        out_gaps.setdefault(r["pe"], {})[seed] = gap(costs[r["pe"]][seed], reference)
    return out_gaps


def summarize(protocol: Protocol, out: Path, pes: list[str] | None = None,
              versus: str | None = None) -> list[Summary]:
    """Summaries in ``pes`` order (default: every PE with rows), paired against ``versus``
    (default: the problem's IPE+XPE)."""
    from scipy.stats import ttest_ind, wilcoxon

    rows = row_store(out / "rows.csv").rows
    costs = instance_costs(out)
    order = pes or list(dict.fromkeys(r["pe"] for r in rows))
    versus = versus or versus_pe(protocol)

    def instance_means(pe: str, seeds: set[int]) -> np.ndarray:
        return np.mean([costs[pe][s] for s in sorted(seeds)], axis=0)

    def seed_gaps(pe: str) -> np.ndarray:
        return np.array([float(r["gap_pct"]) for r in rows if r["pe"] == pe])

    out_rows: list[Summary] = []
    for pe in order:
        mine = [r for r in rows if r["pe"] == pe]
        if not mine:
            continue
        objs = np.array([float(r["obj"]) for r in mine])
        gaps = seed_gaps(pe)
        summary = Summary(pe, title(pe), len(mine), float(objs.mean()), spread(objs),
                          float(gaps.mean()), spread(gaps),
                          paper=paper_value(pe, protocol.problem, protocol.backbone,
                                            protocol.size))
        if pe != versus and versus in costs:
            shared = set(costs[pe]) & set(costs[versus])
            if shared:
                a, b = instance_means(versus, shared), instance_means(pe, shared)
                diff = b - a
                p = float(wilcoxon(diff).pvalue) if np.any(diff != 0) else 1.0
                summary = replace(summary, wins=int((a < b).sum()), losses=int((a > b).sum()),
                                  p_value=p)
            theirs = seed_gaps(versus)
            if min(len(gaps), len(theirs)) > 1 and np.ptp(np.r_[gaps, theirs]) > 0:
                summary = replace(summary, seed_p=float(
                    ttest_ind(gaps, theirs, equal_var=False).pvalue))
        out_rows.append(summary)
    return out_rows


def fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.{digits}f}{suffix}"


def markdown(protocol: Protocol, summaries: list[Summary], reference: np.ndarray,
             versus: str, command: str, untrained: dict[str, str] | None = None,
             baselines: Sequence[dict[str, str]] = (), versus_ran: bool = True) -> str:
    """The summary as a Markdown table (ours beside the paper's), with the command; the
    untrained control (a row of ``untrained.csv``) and the ``baselines.csv`` rows last. Notes
    above the table say when the budget is a plumbing check and why paired columns are empty
    (``versus_ran``: whether the folder holds ``versus``'s rows)."""
    problem = protocol.problem.upper()
    scale = f"{problem}-{protocol.size}"
    paper_ref = paper_reference(protocol.problem, protocol.backbone, protocol.size)
    digits = 3 if protocol.backbone == "n2s" else 2  # Table 6 prints three decimals
    head = (f"| PE | seeds | Obj. (mean ± sd) | Gap % (mean ± sd) | vs {versus}: wins/losses | "
            f"Wilcoxon p | seed-level Welch p | paper Obj. | paper Gap % |\n"
            f"|---|---|---|---|---|---|---|---|---|\n")
    lines = [f"| reference ({protocol.reference}) | | {reference.mean():.4f} "
             f"| - | | | | {fmt(paper_ref, digits)} | - |"]
    for s in summaries:
        lines.append(
            f"| {s.title} | {s.seeds} | {fmt(s.obj, 4)} ± {fmt(s.obj_sd, 4)} | "
            f"{fmt(s.gap)} ± {fmt(s.gap_sd)} | "
            f"{'-' if s.wins is None else f'{s.wins}/{s.losses}'} | {fmt_p(s.p_value)} | "
            f"{fmt_p(s.seed_p)} | "
            f"{fmt(s.paper[0], digits) if s.paper else '-'} | "
            f"{fmt(s.paper[1]) if s.paper else '-'} |")
    if untrained is not None:
        lines.append(f"| control: {title(untrained['pe'])}, untrained (seed "
                     f"{untrained['seed']}) | 1 | {float(untrained['obj']):.4f} | "
                     f"{float(untrained['gap_pct']):.2f} | | | | - | - |")
    for row in baselines:
        lines.append(f"| baseline: {BASELINE_TITLES.get(row['row'], row['row'])} | 1 | "
                     f"{float(row['obj']):.4f} | {float(row['gap_pct']):.2f} "
                     f"({float(row['at_reference']):.0%} at the reference) | | | | - | - |")
    notes = "".join(f"**Note: {note}.**\n\n" for note in summary_notes(protocol, versus,
                                                                       versus_ran))
    return (notes + f"{scale}, {protocol.backbone.upper()} backbone, budget {protocol.budget}: "
            f"{training(protocol)}; test: {protocol.test_size} instances, "
            f"{protocol.eval_steps} steps, {protocol.augment} image(s). Wins: test instances "
            f"where {versus} is better (costs averaged over seeds).\n\n"
            + head + "\n".join(lines) + f"\n\n```sh\n{command}\n```\n")


def summary_notes(protocol: Protocol, versus: str, versus_ran: bool) -> list[str]:
    """What a reader must know before reading the table: a plumbing-check budget, and a
    reference encoding that was not run (its paired columns then stay empty)."""
    notes = [PLUMBING_CHECK] if plumbing_check(protocol.budget) else []
    if not versus_ran:
        notes.append(f"the paired columns (wins/losses, p) are empty because the encoding "
                     f"every other one is paired with, {versus} = {title(versus)}, has no rows "
                     "in this folder; add it to --pe, or pair with one that ran (--versus NAME)")
    return notes


def training(protocol: Protocol) -> str:
    """The training budget in words."""
    schedule = protocol.schedule
    if isinstance(schedule, ImitationConfig):
        return (f"offline imitation of best improvement, {schedule.updates:,} updates of "
                f"{schedule.batch} states labelled on {schedule.instances:,} instances x "
                f"{schedule.trajectory} moves")
    return (f"{schedule.epochs} epochs x {schedule.batches} batches x {schedule.batch_size} "
            f"instances x {schedule.t_train} steps")


def plot(summaries: list[Summary], path: Path, caption: str) -> None:
    """Our gap per PE (mean, sd over seeds as error bars, left axis) beside the paper's gap
    (right axis): the two scales differ, the orderings can be compared."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(summaries) + 2.5), 4.4))
    x = np.arange(len(summaries))
    ax.errorbar(x, [s.gap for s in summaries],
                yerr=[0 if math.isnan(s.gap_sd) else s.gap_sd for s in summaries],
                fmt="o", color="#4c72b0", capsize=4, label="ours: mean ± sd over seeds (left)")
    handles, labels = ax.get_legend_handles_labels()
    paper = [(k, s.paper[1]) for k, s in enumerate(summaries) if s.paper]
    if paper:
        right = ax.twinx()
        right.plot([k for k, _ in paper], [g for _, g in paper], "s", color="#dd8452",
                   label="paper (right)")
        right.set_ylabel("paper gap %")
        more = right.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    ax.set_xticks(x, [s.title.replace(" (direction-", "\n(").replace(", per-route", "\nper-route")
                      for s in summaries], rotation=60, ha="right", fontsize=7)
    ax.set_xlim(-0.6, len(summaries) - 0.4)
    ax.set_ylabel("our gap to the reference %")
    ax.set_title(caption, fontsize=9)
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1.16), ncol=2,
              fontsize=8, frameon=False)
    save_png(fig, path, dpi=130)


def report(protocol: Protocol, out: Path, pes: list[str], command: str, stem: str,
           versus: str | None = None) -> str:
    """Write ``<stem>.md`` and ``<stem>.png`` in ``out`` for ``pes``, each paired against
    ``versus`` (default: the protocol's IPE+XPE); returns the Markdown."""
    versus = versus or versus_pe(protocol)
    summaries = summarize(protocol, out, pes, versus)
    reference = np.array([float(r["cost"]) for r in read_csv(out / "reference.csv")])
    untrained = row_store(out / "untrained.csv").rows
    ran = {r["pe"] for r in row_store(out / "rows.csv").rows}
    text = markdown(protocol, summaries, reference, versus, command,
                    untrained[0] if untrained else None, baseline_store(out).rows,
                    versus in ran)
    atomic_write_text(out / f"{stem}.md", text)
    plot(summaries, out / f"{stem}.png",
         f"{protocol.problem.upper()}-{protocol.size}, {protocol.backbone.upper()}, "
         f"budget {protocol.budget}")
    return text
