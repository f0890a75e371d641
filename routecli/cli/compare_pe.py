"""``routecli compare-pe``: the PE paper's controlled comparison (Table 4, ablations Tables
10-12, N2S vs HA-N2S Table 6) as one resumable command (:mod:`routecli.experiments.pe.pairs`).
Register with ``app.command("compare-pe")(compare_pe)``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from routecli.cli import choices
from routecli.cli.common import Device, ExecutorName, Scheduler, Threads, deprecated, err_console
from routecli.cli.outputs import output_path
from routecli.limits import MAX_INSTANCES, MAX_JOBS, MAX_NODES, MAX_RUNS
from routecli.resources import DEFAULT_DEVICE, DEFAULT_THREADS

MAX_CAPACITY = 1e9  # the largest number an instance file may hold (routecli.io.text)
TABLE4 = choices.COMPARE_PE_DEFAULT


def compare_pe(
    problem: Annotated[str, typer.Option(metavar="NAME", help="cvrp, vrptw or pdtsp.")] = "cvrp",
    size: Annotated[int, typer.Option(
        min=2, max=MAX_NODES, metavar="N",
        help="CVRP, VRPTW: customers (paper: 100); PDTSP: nodes with the depot "
        "(paper: 21, 51, 101).")] = 20,
    pe: Annotated[str, typer.Option(
        metavar="NAMES",
        help="table4 (the 14 encodings of Table 4, every IPE with the paper's printed formula, "
        "plus routecli's integer-harmonic IPE+XPE), table10, table11, table12, table6 (N2S's "
        "own PE vs HA-N2S), ipe-formula (routecli's IPE against the paper's printed formula), "
        "tables10-12-harmonic (Tables 10-12's IPE variants with routecli's IPE), "
        "or a comma list of registry names, each optionally "
        "NAME:key=value[,key=value] (e.g. ipe_inv_xpe:xpe_aggregate=mean,schedule=geometric).")] = TABLE4,
    runs: Annotated[int, typer.Option(
        min=1, max=MAX_RUNS, metavar="N", help="Training runs per PE, with seeds 0..N-1.")] = 3,
    seeds: Annotated[int | None, typer.Option(
        "--seeds", min=1, max=MAX_RUNS, hidden=True, callback=deprecated("--seeds", "--runs"))] = None,
    budget: Annotated[str, typer.Option(
        metavar="NAME",
        help="smoke, cpu (the scaled PPO protocol), paper (the published DACT/N2S recipe) or "
             "imitation (offline imitation of best improvement), optionally "
             "NAME:key=value,... (PPO: epochs, batches, batch_size, t_train, lr_actor, ...; "
             "imitation: instances, trajectory, updates, batch, lr, ...; both: eval_steps).")
    ] = "cpu",
    backbone: Annotated[str, typer.Option(
        metavar="NAME", help="dact (Layer 1) or n2s (Layer 3, PDTSP only).")] = "dact",
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", metavar="FOLDER", parser=output_path,
        help="Run folder (default runs/compare-pe/<problem><size>-<backbone>-<budget>); "
             "rows resume.")] = None,
    capacity: Annotated[float | None, typer.Option(
        min=1.0, max=MAX_CAPACITY, metavar="VALUE", help="CVRP, VRPTW: vehicle capacity of every "
        "generated instance (default: the PE paper's Appendix F rule, 30 up to 20 customers; a "
        "lower one gives more routes).")] = None,
    test_size: Annotated[int, typer.Option(min=1, max=MAX_INSTANCES, metavar="N",
                                           help="Fixed test instances.")] = 128,
    images: Annotated[int, typer.Option(
        min=1, max=8, metavar="N", help="Symmetric images per test instance, 1..8.")] = 1,
    augment: Annotated[int | None, typer.Option(
        "--augment", min=1, max=8, hidden=True, callback=deprecated("--augment N", "--images N"))] = None,
    threads: Threads = DEFAULT_THREADS,
    device: Device = DEFAULT_DEVICE,
    executor: ExecutorName = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, max=MAX_JOBS, metavar="N",
        help="Worker processes of pool and of dask's LocalCluster, one (PE, seed) pair and one "
             "thread each (default 1: this process, with --threads).")] = 1,
    scheduler: Scheduler = None,
    summary_only: Annotated[bool, typer.Option(
        help="Print the table of the rows already in --out, train nothing.")] = False,
    versus: Annotated[str | None, typer.Option(
        metavar="NAME",
        help="Pair every PE against this one in the summary (default: the problem's IPE+XPE; "
             "N2S: HA-N2S), written as summary-<pe>-vs-<versus>.md.")] = None,
) -> None:
    """Retrain one backbone once per positional encoding and seed under an identical budget,
    evaluate all on one fixed test set with an identical step budget, and print Obj./Gap per PE
    (mean ± sd over seeds), paired comparisons with IPE+XPE and the paper's values."""
    from routecli.cli.common import console
    from routecli.experiments.pe.compare import compare
    from routecli.tasks import make_executor

    if pe.strip().lower() == "all":
        err_console.print("note: compare-pe --pe all is deprecated (it means table4 here, and "
                          "every registry encoding in probe); use --pe table4", markup=False)
        pe = TABLE4
    done = compare(problem, size, pe, runs if seeds is None else seeds, budget, backbone, out,
                   test_size, images if augment is None else augment, threads, device,
                   summary_only, versus, log=lambda line: console.print(line, markup=False),
                   capacity=capacity, executor=make_executor(executor, workers, scheduler))
    console.print(done.summary, markup=False)
    console.print(f"wrote {done.summary_files[0]} and {done.summary_files[1]}")
    if done.claims:
        console.print(done.claims, markup=False)
        console.print(f"wrote {done.claims_file}")
