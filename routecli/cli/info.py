"""``routecli info FILE``: describe an instance."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from routecli.cli.common import ROUND_HELP, console, fmt_cost


def info(
    file: Path = typer.Argument(..., metavar="FILE", help="Instance file (.tsp, .vrp, Solomon "
                                ".txt, knapsack .kp)."),
    rounding: str = typer.Option("file", "--round", metavar="RULE", help=ROUND_HELP),
) -> None:
    """Describe an instance: problem, size, distance rule, capacity, demand, best-known value."""
    import numpy as np
    from rich.table import Table

    from routecli.io import best_known, read_instance
    from routecli.problems import KPInstance, PCVRPInstance, PDTSPInstance, VRPTWInstance
    from routecli.problems.instance import CapacitatedInstance

    instance = read_instance(file, rounding)
    table = Table(title=f"{instance.name}", show_header=False)
    table.add_row("file", str(file))
    table.add_row("problem", instance.problem.upper())
    if isinstance(instance, KPInstance):
        weight = float(np.sum(instance.weights))
        table.add_row("size", f"{instance.size} items")
        table.add_row("capacity", f"{instance.capacity:g}")
        table.add_row("total weight", f"{weight:g} ({instance.capacity / weight:.0%} fits)")
        table.add_row("total value", f"{float(np.sum(instance.values)):g}")
        bks, source = best_known(instance, file)
        table.add_row("best known", f"{fmt_cost(bks)} ({source})" if bks is not None else "unknown")
        console.print(table)
        return
    if isinstance(instance, PDTSPInstance):
        table.add_row("size", f"{instance.size} nodes (depot + {instance.num_requests} "
                              "pickup-delivery pairs)")
    else:
        table.add_row("size", f"{instance.size} "
                              f"{'nodes' if instance.problem == 'tsp' else 'customers'}")
    metric = instance.metric
    table.add_row("distance", metric.rule)
    if metric.coords is not None:
        lo, hi = metric.coords.min(axis=0), metric.coords.max(axis=0)
        table.add_row("bounding box", f"x {lo[0]:g}..{hi[0]:g}, y {lo[1]:g}..{hi[1]:g}")
    if isinstance(instance, CapacitatedInstance):
        demand = float(np.sum(instance.demands))
        cap = float(instance.capacity)
        table.add_row("capacity", f"{cap:g}")
        table.add_row("total demand", f"{demand:g} (at least {math.ceil(demand / cap)} routes)")
    if isinstance(instance, VRPTWInstance):
        table.add_row("horizon", f"{instance.ready[0]:g}..{instance.due[0]:g}")
    if isinstance(instance, PCVRPInstance):
        table.add_row("total prize", f"{float(np.sum(instance.prizes)):g}")
    bks, source = best_known(instance, file)
    table.add_row("best known", f"{fmt_cost(bks)} ({source})" if bks is not None else "unknown")
    console.print(table)
