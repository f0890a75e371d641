"""``routecli plot pe``: pictures of a positional encoding on a PyVRP reference solution."""

from __future__ import annotations

from pathlib import Path

import typer

from routecli.cli import choices
from routecli.cli.analyze import BUDGET_HELP, SEED_HELP, SET_HELP, load, one_set
from routecli.cli.common import console, new_app
from routecli.cli.outputs import check_folder, check_replaceable, output_path
from routecli.cli.probe import MAX_DIM, resolve_names
from routecli.errors import OptionError
from routecli.limits import MAX_FACTOR, MAX_INSTANCES, MIN_FACTOR
from routecli.resources import SEED_MAX

app = new_app("Draw PNG pictures.")


@app.command()
def pe(
    name: str = typer.Option("ipe_inv_xpe", "--pe", metavar="NAME", help="Encoding to draw: "
                             + ", ".join(choices.PE_NAMES) + "."),
    plots: str = typer.Option("all", "--plots", metavar="NAMES", help="all, or "
                              "comma-separated: " + ", ".join(choices.PE_PLOTS) + "."),
    problem_set: str = typer.Option("cvrp-100", "--set", metavar="SET", help=SET_HELP + "."),
    instance: int = typer.Option(0, "--instance", min=0, max=MAX_INSTANCES - 1, metavar="N",
                                 help="Which instance of "
                                 "the set."),
    dim: int = typer.Option(32, "--dim", min=2, max=MAX_DIM, metavar="N", help="Encoding width."),
    seed: int = typer.Option(0, "--seed", min=0, max=SEED_MAX, metavar="N", help=SEED_HELP),
    ref_budget: float = typer.Option(None, "--ref-budget", min=MIN_FACTOR, max=MAX_FACTOR,
                                     metavar="FACTOR", help=BUDGET_HELP),
    out: Path = typer.Option(Path("plots"), "--out", "-o", metavar="FOLDER", parser=output_path,
                             help="Folder for "
                             "the PNG files (PE-PLOT.png)."),
) -> None:
    """Pictures of an encoding on one reference solution: the PE matrix along the longest
    route (heatmap), its position-by-position cosine similarity, IPE channels against
    cumulative distance vs index, XPE angles per route, and a 2-D PCA coloured by route."""
    from routecli.analysis.pe_plots import PLOTS, plot_paths, plot_pe
    from routecli.pe import PE_REGISTRY, RouteBatch
    from routecli.pe.kinds import KINDS
    from routecli.plots.figure import drawn_by_routecli

    encodings = resolve_names(name)
    if len(encodings) != 1:
        raise OptionError(f"--pe takes one encoding here, got {len(encodings)}")
    (encoding,) = encodings
    set_name = one_set(problem_set)
    chosen = PLOTS if plots.strip().lower() == "all" else tuple(
        p.strip().lower() for p in plots.split(","))
    bad = [p for p in chosen if p not in PLOTS]
    if bad:
        raise OptionError(f"unknown plot {bad[0]!r}; choose 'all' or from {', '.join(PLOTS)}")
    kind = PE_REGISTRY[encoding].kind
    if not KINDS[kind].channels:
        if {"similarity", "pca"} & set(chosen) and plots.strip() != "all":
            raise OptionError(f"--plots similarity/pca need a node encoding; {encoding} is {kind}")
        chosen = tuple(p for p in chosen if p not in ("similarity", "pca"))
    if dim % 16:
        raise OptionError(f"--dim must be a multiple of 16 (IPE pairs, 8 RoPE heads), got {dim}")
    check_folder(out)
    for path in plot_paths(encoding, chosen, out):
        check_replaceable(path, None, "--out", drawn_by_routecli)
    instances, solutions = load(set_name, instance + 1, seed, ref_budget, jobs=1)
    batch = RouteBatch.from_solutions(instances[instance:], solutions[instance:])
    try:
        paths = plot_pe(batch, encoding, chosen, out, dim=dim, seed=seed)
    except ValueError as exc:
        raise OptionError(str(exc)) from None
    for path in paths:
        console.print(f"wrote {path}")
