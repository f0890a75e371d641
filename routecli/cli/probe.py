"""``routecli probe``: Spearman correlation of PE-induced pairwise distances with the desiderata
D1-D3 on reference solutions (PE paper Section 5.2, Table 3)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from routecli.cli import choices
from routecli.cli.analyze import (
    BUDGET_HELP,
    OUT_HELP,
    SET_HELP,
    check_out,
    command_line,
    fmt,
    load,
    one_set,
    reference_settings,
    write_rows,
)
from routecli.cli.common import JOBS_HELP, Device, Seed, Threads, console, cpu_device
from routecli.cli.outputs import output_path
from routecli.cli.progress_bar import item_bar
from routecli.errors import OptionError
from routecli.limits import MAX_FACTOR, MAX_INSTANCES, MAX_JOBS, MIN_FACTOR
from routecli.resources import DEFAULT_DEVICE

if TYPE_CHECKING:
    from rich.table import Table

MAX_PAIRS = 10**7  # pairs per solution and target set
MAX_DIM = 4096  # encoding width
MAX_HEADS = 256  # attention heads

PROBE_HELP = """Spearman correlation of PE distances with the desiderata D1-D3 (PE paper Table 3).

Computed on PyVRP reference solutions. Pairs: per solution, --pairs
same-route customer pairs (uniform over such pairs) for D1/D2 and --pairs pairs of distinct
customers for D3. Targets (d = travel distance from the depot along the route, d_L = route
length): D1 = |d_u - d_v|; D2 = min(|d_u - d_v|, d_L - |d_u - d_v|), the cyclic arc distance;
D3 = 1 if u and v are on different routes, else 0 (the paper's ratio of mean inter- to
intra-route PE distance is the 'ratio' column). PE-induced distance: node encodings
||PE(u) - PE(v)||; bias encodings -(b(u,v) + b(v,u))/2 averaged over heads; RoPE
||R(u)1 - R(v)1||, the distance between the all-ones query rotated to the two positions.
Learnable encodings are probed as initialised (seeded)."""


def resolve_names(text: str) -> list[str]:
    """``all`` or comma-separated registry names (``OptionError`` on an unknown one)."""
    from routecli.pe import PE_REGISTRY

    if text.strip().lower() == "all":
        return list(PE_REGISTRY)
    names = [n.strip().lower().replace("-", "_").replace("+", "_") for n in text.split(",")]
    unknown = [n for n in names if n not in PE_REGISTRY]
    if unknown or not names:
        raise OptionError(f"unknown positional encoding {unknown[0] if unknown else text!r}; "
                          f"choose 'all' or from {', '.join(PE_REGISTRY)}")
    return names


def probe(
    pe: str = typer.Option("all", "--pe", metavar="NAMES", help="all, or comma-separated "
                           "encodings: " + ", ".join(choices.PE_NAMES) + "."),
    problem_set: str = typer.Option("cvrp-100", "--set", metavar="SET", help=SET_HELP + "."),
    num: int = typer.Option(1000, "--num", min=1, max=MAX_INSTANCES, metavar="N", help="Solutions to probe."),
    pairs: int = typer.Option(1000, "--pairs", min=1, max=MAX_PAIRS, metavar="N", help="Pairs per solution "
                              "and target set (1,000 x 1,000 solutions = the paper's 10^6)."),
    dim: int = typer.Option(128, "--dim", min=2, max=MAX_DIM, metavar="N", help="PE width (RoPE: dim / "
                            "heads per head)."),
    heads: int = typer.Option(8, "--heads", min=1, max=MAX_HEADS, metavar="N", help="Attention heads (ALiBi "
                              "slopes, RoPE)."),
    seed: Seed = 0,
    ref_budget: float = typer.Option(None, "--ref-budget", min=MIN_FACTOR, max=MAX_FACTOR,
                                     metavar="FACTOR", help=BUDGET_HELP),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, max=MAX_JOBS, metavar="N", help=JOBS_HELP),
    ipe_schedule: str = typer.Option("geometric", "--ipe-schedule", metavar="NAME",
                                     help="IPE frequencies: geometric, the paper's printed "
                                     "formula 10000^(-2k/D) (as in the comparison tables), or "
                                     "integer, routecli's harmonics (exactly circular and "
                                     "reversal-invariant; the registry's IPE)."),
    ipe_amplitude: str = typer.Option(None, "--ipe-amplitude", metavar="NAME",
                                      help="IPE channel scale: flat (the printed formula's) or "
                                      "harmonic (1/k, default with --ipe-schedule integer)."),
    references: bool = typer.Option(True, "--references/--no-references", help="Add two "
                                    "reference rows that are not encodings: the index gap "
                                    "|i - j| and the normalised cyclic arc."),
    threads: Threads = 1,
    device: Device = DEFAULT_DEVICE,
    out: Path = typer.Option(None, "--out", "-o", metavar="FILE", parser=output_path,
                             help=OUT_HELP),
) -> None:
    import torch

    from routecli.analysis.data import parse_set
    from routecli.analysis.probe import (
        PROBE_COLUMNS,
        REFERENCES,
        check_room,
        probe_options,
        probe_rows,
    )
    from routecli.analysis.probe import probe as run_probe
    from routecli.pe import RouteBatch

    cpu_device(device, "probe")
    names = resolve_names(pe)
    name = one_set(problem_set)
    check_out(out, PROBE_COLUMNS)
    options = probe_options(names, dim, heads, ipe_schedule, ipe_amplitude)
    kind, size = parse_set(name)  # PDTSP sizes count the depot, the CVRP family's do not
    check_room(num, size if kind == "pdtsp" else size + 1, pairs, dim, heads)
    instances, solutions = load(name, num, seed, ref_budget, jobs)
    batch = RouteBatch.from_solutions(instances, solutions)
    start = time.time()
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    names = names + (list(REFERENCES) if references else [])
    try:
        with item_bar("probe", len(names)) as done:
            results = run_probe(batch, names, pairs, dim=dim, num_heads=heads, seed=seed,
                                pe_options=options, on_done=done)
    finally:
        torch.set_num_threads(previous_threads)
    rows = probe_rows(results, names, name)
    table = probe_table(f"PE probe on {name}: Spearman rho (ours | PE paper Table 3)", names)
    for row in rows:
        if row["pe"] == next(iter(REFERENCES)):
            table.add_section()
        table.add_row(row["pe"], row["kind"], *(fmt(row[k]) for k in (
            "D1", "D1_paper", "D2", "D2_paper", "D3", "D3_paper")), fmt(row["d3_ratio"], 2))
    console.print(table)
    console.print(f"[dim]{len(batch.node)} solutions, {pairs} pairs each per target set, "
                  f"{time.time() - start:.0f} s; {command_line()}[/dim]")
    write_rows(out, rows, {"command": command_line(), "seed": seed, "set": name, "num": num,
                           "pairs_per_solution": pairs, "dim": dim, "heads": heads,
                           "ipe_schedule": ipe_schedule, "ipe_amplitude": ipe_amplitude,
                           "references": reference_settings([name], ref_budget)}, PROBE_COLUMNS)


def probe_table(title: str, names: list[str]) -> Table:
    """The result table, narrow enough for an 80-column or piped terminal with every name
    and number whole: the box's one space between columns, no padding, nothing wrapped."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, padding=0, pad_edge=False)
    table.add_column("pe", no_wrap=True, min_width=max(map(len, names), default=2))
    for col in ("kind", "D1", "paper", "D2", "paper", "D3", "paper", "ratio"):
        table.add_column(col, justify="left" if col == "kind" else "right", no_wrap=True)
    return table


probe.__doc__ = PROBE_HELP
