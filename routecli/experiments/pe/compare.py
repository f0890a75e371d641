"""``routecli compare-pe`` as one library call: train and evaluate the missing (PE, seed) pairs
of a run folder (:mod:`.pairs`), then write its summary (:mod:`.summary`) and the paper's
findings pair by pair (:mod:`.claims`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from routecli.errors import OptionError
from routecli.experiments.pe.claims import report as report_claims
from routecli.experiments.pe.pairs import check_run_folder, finished, run, slug
from routecli.experiments.pe.paper import expand_pes
from routecli.experiments.pe.protocol import (
    PLUMBING_CHECK,
    check_pe,
    check_room,
    make_protocol,
    plumbing_check,
)
from routecli.experiments.pe.summary import report
from routecli.resources import resolve_device
from routecli.tasks import Executor

TABLE4 = "table4"  # the default set of encodings, and the one whose summary is summary.md


@dataclass(frozen=True)
class Comparison:
    """What a comparison wrote: the summary (Markdown text and its files) and the claims."""

    summary: str
    summary_files: tuple[Path, Path]  # summary .md and .png
    claims: str  # empty when the folder holds no compared pair yet
    claims_file: Path


def default_folder(problem: str, size: int, backbone: str, budget: str) -> Path:
    return Path("runs/compare-pe") / f"{problem}{size}-{backbone}-{budget.split(':')[0]}"


def compare(problem: str, size: int, pe: str = TABLE4, runs: int = 3, budget: str = "cpu",
            backbone: str = "dact", out: Path | None = None, test_size: int = 128,
            images: int = 1, threads: int = 1, device: str = "auto",
            summary_only: bool = False, versus: str | None = None,
            log: Callable[[str], None] = print, capacity: float | None = None,
            executor: Executor | None = None) -> Comparison:
    """Run (unless ``summary_only``; each (PE, seed) a task on ``executor``, default this
    process) and summarise the comparison of the encodings ``pe`` (a table name or a list,
    :func:`~.paper.expand_pes`) over seeds ``0..runs-1`` in ``out``; ``versus`` pairs every PE
    against that one instead of the problem's IPE+XPE; ``capacity``: CVRP and VRPTW vehicles
    (default: the paper's rule)."""
    import torch

    torch.set_num_threads(threads)
    protocol = make_protocol(problem, size, backbone, budget, test_size, images, capacity)
    pes = expand_pes(pe, problem)
    if versus is not None:
        names = expand_pes(versus, problem)
        if len(names) != 1:
            raise OptionError(f"--versus must name one encoding, got {versus!r}")
        versus = names[0]
    for name in dict.fromkeys([*pes, *([versus] if versus else [])]):
        check_pe(protocol, name)
    check_room(protocol)
    if runs < 1:
        raise OptionError(f"--runs must be >= 1, got {runs}")
    folder = out or default_folder(problem, size, backbone, budget)
    scale = f"routecli compare-pe --problem {problem} --size {size}" + (
        "" if capacity is None else f" --capacity {capacity:g}")
    rest = (f"--runs {runs} --budget {budget} --backbone {backbone} --test-size {test_size} "
            f"--images {images} --out {folder}")
    stem = "summary" if pe == TABLE4 else f"summary-{slug(pe)}"
    shown = f"{scale} --pe {pe} {rest}"
    if versus is not None:
        stem = f"summary-{slug(pe)}-vs-{slug(versus)}"
        shown += f" --versus {versus}"
    # every check before the first file: the folder, its protocol, its results files and the
    # reports this run writes
    check_run_folder(protocol, folder, [f"{stem}.md", f"{stem}.png", "claims.md"])
    if summary_only and not (folder / "protocol.json").is_file():
        raise OptionError(f"--summary-only: {folder} holds no compare-pe run")
    if plumbing_check(budget):
        log(f"note: {PLUMBING_CHECK}")
    if not summary_only:
        run(protocol, pes, list(range(runs)), folder, log=log, device=resolve_device(device),
            executor=executor)
    done = {name for name, _ in finished(folder)}
    if not done & set(pes):
        raise OptionError(f"--out: {folder} has no rows of {', '.join(pes)} yet")
    if versus is not None:
        if versus not in done:
            raise OptionError(f"--versus: {versus} has no rows in {folder}")
        if versus not in pes:
            pes.append(versus)
    text = report(protocol, folder, pes, shown, stem, versus)
    claims = report_claims(protocol, folder, f"{scale} {rest} --summary-only")
    return Comparison(text, (folder / f"{stem}.md", folder / f"{stem}.png"), claims,
                      folder / "claims.md")
