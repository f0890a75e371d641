"""``routecli generate PROBLEM``: seeded synthetic instances as an ``.npz`` batch or as
VRPLIB/TSPLIB files."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from routecli.cli import choices
from routecli.cli.common import Seed, console, deprecated
from routecli.cli.outputs import check_folder, check_replaceable, output_path
from routecli.errors import InstanceFormatError, OptionError
from routecli.limits import MAX_INSTANCES, MAX_NODES

FORMATS = ("npz", "file")
MAX_SCALE = 10**9  # coordinates in [0, 1] times this: the readers' largest number (see io.text)
PORTGEN = "portgen"


def generate(
    problem: str = typer.Argument(..., metavar="PROBLEM",
                                  help=f"Problem: {', '.join(choices.GENERATE_PROBLEMS)}, or "
                                  "portgen (DIMACS challenge uniform TSP, --format file)."),
    size: int = typer.Option(100, "--size", min=1, max=MAX_NODES, metavar="N", help="Instance size: "
                             "customers (CVRP family), nodes (TSP), pickup+delivery nodes "
                             "(PDTSP) or items (KP)."),
    size_short: int | None = typer.Option(None, "-n", min=1, max=MAX_NODES, hidden=True,
                                          callback=deprecated("-n", "--size")),
    size_alias: int | None = typer.Option(None, "--n", min=1, max=MAX_NODES, hidden=True,
                                          callback=deprecated("--n", "--size")),
    num: int = typer.Option(1, "--num", min=1, max=MAX_INSTANCES, metavar="N", help="Number of instances."),
    seed: Seed = 0,
    out: Path = typer.Option(..., "--out", "-o", metavar="PATH", parser=output_path,
                             help="Output .npz file "
                             "(--format npz) or folder (--format file)."),
    fmt: str = typer.Option("npz", "--format", metavar="FORMAT", help="npz (one batch for "
                            "training/evaluation) or file (one .vrp/.tsp/.kp per instance; "
                            "PDTSP: VRPLIB with a PICKUP_AND_DELIVERY_SECTION)."),
    capacity: str = typer.Option("default", "--capacity", metavar="VALUE", help="CVRP family: "
                                 "default (50 for CVRP, the PE rule otherwise), a number, miloop "
                                 "(50), or pe (PE paper Appendix F, size-dependent); KP: one of "
                                 + "/".join(map(str, choices.KP_CAPACITIES)) + " (default 25)."),
    distribution: str = typer.Option("uniform", "--distribution", metavar="NAME",
                                     help="CVRP family: " + ", ".join(choices.DISTRIBUTIONS)
                                     + " (formulas in the routecli.generate module)."),
    scale: int = typer.Option(1000, "--scale", min=1, max=MAX_SCALE, metavar="N",
                              help="--format file: "
                              "coordinates are multiplied by this and rounded (EUC_2D files, "
                              "like CVRPLIB)."),
) -> None:
    """Generate seeded synthetic instances (the formulas are in the routecli.generate module)."""
    from routecli.generate import GENERATORS, is_batch_file, save_batch
    from routecli.io.writers import instance_files

    size = next((s for s in (size_short, size_alias) if s is not None), size)
    if problem == PORTGEN:
        write_portgen(size, seed, num, out, fmt)
        return
    if problem not in GENERATORS:
        raise OptionError(f"unknown problem {problem!r}; choose from {', '.join(GENERATORS)}")
    if fmt not in FORMATS:
        raise OptionError(f"--format must be npz or file, got {fmt!r}")
    if fmt == "npz":
        if out.suffix != ".npz":
            raise OptionError(f"--out must end in .npz for --format npz, got {out}")
        check_replaceable(out, None, "--out", is_batch_file)
    else:
        check_folder(out)
    kwargs = _problem_options(problem, capacity, distribution)
    try:
        batch = GENERATORS[problem](num, size, seed, **kwargs)
    except ValueError as exc:
        raise OptionError(str(exc)) from None
    if fmt == "npz":
        save_batch(out, problem, batch)
        console.print(f"wrote {num} {problem.upper()}-{size} instances to {out}")
        return
    try:
        files = instance_files(problem, batch, seed, scale)
    except InstanceFormatError as exc:
        raise OptionError(f"cannot generate {exc}") from None
    write_files(out, files)
    console.print(f"wrote {len(files)} {problem.upper()}-{size} files to {out}/")


def write_files(folder: Path, files: list[tuple[str, str]]) -> None:
    """Write generated instance files (name, text) into ``folder``, after checking that none
    would replace a file routecli did not generate."""
    from routecli.atomic import atomic_write_text
    from routecli.io.writers import generated_by_routecli

    for name, _ in files:
        check_replaceable(folder / name, None, "--out", generated_by_routecli)
    for name, text in files:
        atomic_write_text(folder / name, text)


def _problem_options(problem: str, capacity: str, distribution: str) -> dict:
    from routecli.generate import KP_CAPACITIES

    if problem in ("tsp", "pdtsp"):
        return {}
    if problem == "kp":
        shown = "/".join(map(str, KP_CAPACITIES))
        try:
            cap = 25.0 if capacity == "default" else float(capacity)
        except ValueError:
            cap = math.nan
        if cap not in KP_CAPACITIES:
            raise OptionError(f"KP --capacity must be one of {shown}, got {capacity!r}")
        return {"capacity": cap}
    default = 50.0 if problem == "cvrp" else None  # MiLoop's CVRP; PE rule for VRPTW/PCVRP
    cap_value = {"default": default, "miloop": 50.0, "pe": None}.get(capacity)
    if capacity not in ("default", "miloop", "pe"):
        cap_value = _number(capacity)
    return {"capacity": cap_value, "distribution": distribution}


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise OptionError(f"--capacity must be a number, 'miloop' or 'pe', got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise OptionError(f"--capacity must be positive, got {text!r}")
    return value


def write_portgen(n: int, seed: int, num: int, out: Path, fmt: str) -> None:
    """``portgen N SEED`` as TSPLIB files in ``out`` (seeds SEED .. SEED + num - 1), each named
    after its DIMACS E-series instance where it is one (``--size 1000000 --seed 1000000``:
    ``E1M.0.tsp``)."""
    from routecli.generate.portgen import check, portgen, portgen_name
    from routecli.io.writers import format_tsplib

    if fmt != "file":
        raise OptionError("portgen writes TSPLIB files: use --format file")
    check_folder(out)
    seeds = range(seed, seed + num)
    try:
        for s in seeds:
            check(n, s)
    except ValueError as exc:
        raise OptionError(str(exc)) from None
    for s in seeds:
        name = f"{portgen_name(n, s)}.tsp"
        write_files(out, [(name, format_tsplib(f"portgen-{n}-{s}", f"portgen N={n}, seed={s}",
                                               portgen(n, s)))])
        console.print(f"wrote {out / name}")
