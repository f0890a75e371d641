"""``routecli data path|check|fetch``: where the public benchmark sets live on this machine, whether
they are complete and the published instances, and downloading them
(:mod:`routecli.io.datasets`)."""

from __future__ import annotations

from pathlib import Path

import typer

from routecli.cli import choices
from routecli.cli.common import console, err_console, new_app
from routecli.errors import OptionError

app = new_app("The public benchmark sets (TSPLIB, CVRPLIB X and AGS): where they are, whether "
              "they are complete, and downloading them.")

ROOT_HELP = ("Data folder (default: $ROUTECLI_DATA, else the user data folder, else "
             "../shared/benchdata when it exists; routecli data path says which).")
SETS_HELP = f"Set, repeatable: {', '.join(choices.BENCH_SETS)} (default: all)."


def _sets(sets: list[str]) -> list[str]:
    for name in sets:
        if name not in choices.BENCH_SETS:
            raise OptionError(f"--set must be one of {', '.join(choices.BENCH_SETS)}, got {name!r}")
    return list(dict.fromkeys(sets)) or list(choices.BENCH_SETS)


@app.command()
def path(data_root: Path | None = typer.Option(None, "--data-root", metavar="FOLDER",
                                               help=ROOT_HELP)) -> None:
    """Print the data folder in use and how it was chosen."""
    import os

    from routecli.io.datasets import DATA_ROOT_ENV, user_data_folder
    from routecli.io.datasets import data_root as root_of

    root = root_of(data_root)
    if data_root is not None:
        why = "--data-root"
    elif os.environ.get(DATA_ROOT_ENV):
        why = f"${DATA_ROOT_ENV}"
    elif root is None:
        console.print(f"{user_data_folder()} (the user data folder; absent: routecli data "
                      "fetch creates it)", markup=False)
        return
    else:
        why = "the user data folder" if root == user_data_folder() else \
            "../shared/benchdata, found from the working folder"
    console.print(f"{root} ({why})", markup=False)


@app.command()
def check(
    data_root: Path | None = typer.Option(None, "--data-root", metavar="FOLDER", help=ROOT_HELP),
    sets: list[str] = typer.Option([], "--set", metavar="SET", help=SETS_HELP),
    quick: bool = typer.Option(False, "--quick", help="Only look for the files; without it "
                               "every instance is read and compared with the registry's "
                               "fingerprint (a minute or so for all 191)."),
) -> None:
    """Check the data folder against routecli's registry: every instance present and the
    published one. Exit 0 when every set asked for is complete, 1 when not."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from routecli.io.datasets import DATASETS
    from routecli.io.datasets import check as check_sets
    from routecli.io.datasets import data_root as root_of

    chosen = _sets(sets)
    root = root_of(data_root)
    if root is None or not root.is_dir():
        raise OptionError(f"no data folder{'' if root is None else f' at {root}'}; routecli "
                          "data fetch downloads the sets")
    total = sum(len(DATASETS[name].names()) for name in chosen)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("checking", total=total)
        statuses = check_sets(root, chosen, verify=not quick,
                              progress=lambda name: bar.update(task, advance=1,
                                                               description=f"checking {name}"))
    for status in statuses:
        expected = len(status.dataset.names())
        line = (f"{status.dataset.name}: {len(status.found)} of {expected} instances"
                f"{'' if quick else ' verified'} in {status.folder}, {status.solutions} with a "
                "best-known solution file")
        console.print(line, markup=False)
        if status.missing:
            shown = ", ".join(status.missing[:5]) + (", ..." if len(status.missing) > 5 else "")
            console.print(f"  missing {len(status.missing)}: {shown}", markup=False)
        for name, why in status.wrong.items():
            console.print(f"  {name}: {why}", markup=False)
    if not all(s.complete for s in statuses):
        console.print("incomplete: routecli data fetch downloads what is missing", markup=False)
        raise typer.Exit(1)


@app.command()
def fetch(
    data_root: Path | None = typer.Option(None, "--data-root", metavar="FOLDER", help=ROOT_HELP),
    sets: list[str] = typer.Option([], "--set", metavar="SET", help=SETS_HELP),
) -> None:
    """Download the sets into the data folder (the user data folder unless one is given) and
    check them. Files already there are kept."""
    from routecli.io.datasets import fetch as fetch_sets
    from routecli.io.datasets import target_root

    chosen = _sets(sets)
    root = target_root(data_root)
    fetch_sets(root, chosen, log=lambda line: console.print(line, markup=False))
    check(data_root=root, sets=chosen, quick=False)
