"""``routecli compare-pe``: the PE paper's controlled comparison (Table 4, ablations Tables
10-12, N2S vs HA-N2S Table 6) as one resumable command (:mod:`routecli.improve.compare`).
Register with ``app.command("compare-pe")(compare_pe)``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def compare_pe(
    problem: Annotated[str, typer.Option(help="cvrp, vrptw or pdtsp")] = "cvrp",
    size: Annotated[int, typer.Option(
        help="CVRP, VRPTW: customers (paper: 100); PDTSP: nodes with the depot (paper: 21, 51, "
             "101)")] = 20,
    pe: Annotated[str, typer.Option(
        help="all (= table4: the 14 encodings of Table 4), table10, table11, table12, table6 "
             "(N2S's own PE vs IPE+XPE), or a comma list of registry names, each optionally "
             "NAME:key=value (e.g. ipe_inv_xpe:xpe_aggregate=mean)")] = "all",
    seeds: Annotated[int, typer.Option(help="seeds 0..N-1 per PE")] = 3,
    budget: Annotated[str, typer.Option(
        help="smoke, cpu (the scaled CPU protocol) or paper (the published DACT/N2S recipe), "
             "optionally NAME:key=value,... (epochs, batches, batch_size, t_train, n_step, "
             "k_epochs, lr_actor, lr_critic, lr_decay, curriculum, eval_steps, ...)")] = "cpu",
    backbone: Annotated[str, typer.Option(
        help="dact (Layer 1) or n2s (Layer 3, PDTSP only)")] = "dact",
    out: Annotated[Path | None, typer.Option(
        help="run folder (default runs/compare-pe/<problem><size>-<backbone>-<budget>); rows "
             "resume")] = None,
    test_size: Annotated[int, typer.Option(help="fixed test instances")] = 128,
    augment: Annotated[int, typer.Option(help="symmetric images per test instance (1..8)")] = 1,
    threads: Annotated[int, typer.Option(help="torch CPU threads")] = 1,
    summary_only: Annotated[bool, typer.Option(
        help="print the table of the rows already in --out, train nothing")] = False,
) -> None:
    """Retrain one backbone once per positional encoding and seed under an identical budget,
    evaluate all on one fixed test set with an identical step budget, and print Obj./Gap per PE
    (mean ± sd over seeds), paired comparisons with IPE+XPE and the paper's values."""
    import torch

    from routecli.cli.common import console
    from routecli.improve import compare

    torch.set_num_threads(max(1, threads))
    protocol = compare.make_protocol(problem, size, backbone, budget, test_size, augment)
    pes = compare.expand_pes(pe, problem)
    if seeds < 1:
        raise typer.BadParameter("must be >= 1", param_hint="--seeds")
    folder = out or Path("runs/compare-pe") / f"{problem}{size}-{backbone}-{budget.split(':')[0]}"
    if not summary_only:
        compare.run(protocol, pes, list(range(seeds)), folder,
                    log=lambda line: console.print(line, markup=False))
    if not (folder / "rows.csv").is_file():
        raise typer.BadParameter(f"{folder} has no rows yet", param_hint="--out")
    command = (f"routecli compare-pe --problem {problem} --size {size} --pe {pe} --seeds {seeds} "
               f"--budget {budget} --backbone {backbone} --test-size {test_size} --augment "
               f"{augment} --out {folder}")
    stem = "summary" if pe == "all" else f"summary-{compare.slug(pe)}"
    text = compare.report(protocol, folder, pes, command, stem)
    console.print(text, markup=False)
    console.print(f"wrote {folder / (stem + '.md')} and {folder / (stem + '.png')}")
