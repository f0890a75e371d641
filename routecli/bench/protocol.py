"""PyVRP's published benchmark protocol as a preset (``routecli bench --protocol pyvrp``) and
the anytime measures it is read with.

PyVRP benchmarks the CVRP on the CVRPLIB X instances with a time limit of 2.4 x n seconds (n
clients) on a CPU of PassMark single-thread score 2183, ``round`` distances, 10 seeds, one
core per run, against the best-known values; v0.14.0 publishes a mean gap of 0.31%. Here the
limit is scaled by ``time_scale`` so that a user can fit the protocol to their CPU or budget;
the report states the scale, the CPU and its measured single-thread speed on a fixed workload
(:func:`measure_machine`).

The primal integral follows the 12th DIMACS Implementation Challenge (CVRP track) controller:
with solutions of values v_1 > v_2 > ... found at times t_1 < t_2 < ..., v_0 = 1.1 x BKS at
t_0 = 0 and t_{k+1} = T the time limit,
PI = 100 x (sum_i v_{i-1} (t_i - t_{i-1}) / (T x BKS) - 1),
the gap over time averaged over the run (0 for a run that starts at the best-known value, 10
for one that never gets within 10%).
"""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from routecli.errors import OptionError
from routecli.problems import Instance
from routecli.stop import MaxRuntime

BASE_FACTOR = 1.1  # DIMACS: the value counted before the first solution
WITHIN_PCT = 1.0  # the "time to within 1% of the best-known value"
PYVRP_PUBLISHED = {"version": "0.14.0", "set": "CVRPLIB X (100 instances)", "mean_gap_pct": 0.31,
                   "seconds_per_client": 2.4, "passmark": 2183, "seeds": 10}
SPEED_ITERATIONS = 1000  # the fixed workload of measure_machine
SPEED_INSTANCE = ("cvrp", 100, 0)  # problem, clients, generator seed


@dataclass(frozen=True)
class Protocol:
    """A benchmark protocol: a time limit of ``seconds_per_client`` x n x ``time_scale`` per
    instance of n clients, ``runs`` seeds, one core per run, the distance ``rounding``."""

    name: str
    seconds_per_client: float
    runs: int
    rounding: str
    time_scale: float = 1.0

    def __post_init__(self) -> None:
        if not self.time_scale > 0:
            raise OptionError(f"--time-scale must be > 0, got {self.time_scale:g}")

    def stop(self, instance: Instance) -> MaxRuntime:
        return MaxRuntime(self.seconds_per_client * instance.size * self.time_scale)

    def describe(self) -> dict[str, Any]:
        return asdict(self)


PROTOCOLS = {"pyvrp": Protocol("pyvrp", seconds_per_client=2.4, runs=10, rounding="euc2d")}


def protocol(name: str, time_scale: float = 1.0) -> Protocol:
    if name not in PROTOCOLS:
        raise OptionError(f"--protocol must be one of {', '.join(PROTOCOLS)}, got {name!r}")
    base = PROTOCOLS[name]
    return Protocol(base.name, base.seconds_per_client, base.runs, base.rounding, time_scale)


Trajectory = Sequence[tuple[float, float]]  # (seconds, best cost) at each improvement


def primal_integral(trajectory: Trajectory, reference: float | None,
                    limit: float) -> float | None:
    """The DIMACS primal integral in percent (see the module docstring) of a minimising run
    with time limit ``limit``; None without a reference or a trajectory."""
    if reference is None or reference <= 0 or not trajectory or not limit > 0:
        return None
    area, last_time, last_value = 0.0, 0.0, BASE_FACTOR * reference
    for at, value in trajectory:
        if value >= last_value:  # no better than what counts already
            continue
        at = min(max(at, last_time), limit)
        area += last_value * (at - last_time)
        last_time, last_value = at, value
    area += last_value * (limit - last_time)
    return 100.0 * (area / (limit * reference) - 1.0)


def time_to_within(trajectory: Trajectory, reference: float | None,
                   pct: float = WITHIN_PCT) -> float | None:
    """Seconds until the best cost first came within ``pct`` percent of ``reference`` (None:
    never, or no reference)."""
    if reference is None:
        return None
    bound = reference * (1.0 + pct / 100.0)
    return next((at for at, value in trajectory if value <= bound), None)


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux)."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def measure_machine() -> dict[str, Any]:
    """The CPU this process runs on and its single-thread speed on a fixed workload: PyVRP
    iterations per second over :data:`SPEED_ITERATIONS` iterations (seed 0) on the generated
    CVRP instance :data:`SPEED_INSTANCE` (run as a task, so it measures a worker's core)."""
    from routecli.baselines.hgs import search
    from routecli.generate import GENERATORS, batch_instances
    from routecli.stop import MaxIterations

    problem, clients, seed = SPEED_INSTANCE
    instance = batch_instances(problem, GENERATORS[problem](1, clients, seed))[0]
    started = time.perf_counter()
    search(instance, seed=0, stop=MaxIterations(SPEED_ITERATIONS))
    seconds = time.perf_counter() - started
    return {"cpu": cpu_model(), "host": platform.node(),
            "pyvrp_iterations_per_second": round(SPEED_ITERATIONS / seconds, 1),
            "workload": f"PyVRP {SPEED_ITERATIONS} iterations, seed 0, generated "
                        f"{problem.upper()}-{clients} (generator seed {seed}), one thread",
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _number(text: str) -> float | None:
    return float(text) if text not in ("", "None") else None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _cell(value: float | None, digits: int = 2, unit: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def markdown(rows: list[dict[str, str]], protocol: Protocol,
             machine: dict[str, Any] | None) -> str:
    """The protocol section of a bench report from its ``results.csv`` rows: per instance the
    mean gap over seeds, the best gap, the mean primal integral and the time to within 1% of
    the best-known value; the run beside PyVRP's published result, with what differs."""
    by_instance: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        by_instance.setdefault(r["instance"], []).append(r)
    lines = [f"## Protocol {protocol.name}: gap over seeds and primal integral", "",
             f"Time limit {protocol.seconds_per_client:g} x n s x time scale "
             f"{protocol.time_scale:g} per instance of n clients, distances "
             f"{protocol.rounding} (PyVRP's round), one core and one thread per run. Primal "
             "integral: DIMACS CVRP rules (the gap over time, averaged over the time limit, "
             f"{100 * (BASE_FACTOR - 1):g}% before a first solution). To 1%: mean seconds until "
             f"within {WITHIN_PCT:g}% of the best-known value over the seeds that got there.",
             ""]
    if machine:
        lines += [f"Workers' CPU: {machine.get('cpu', '?')} ({machine.get('host', '?')}): "
                  f"{machine.get('pyvrp_iterations_per_second', '?')} iterations/s on "
                  f"{machine.get('workload', '?')}; measured {machine.get('date', '?')}.", ""]
    lines += ["| instance | n | limit (s) | seeds | mean gap | best gap | primal integral | "
              "to 1% (s) | reached 1% |", "|---|---|---|---|---|---|---|---|---|"]
    means: list[float] = []
    bests: list[float] = []
    integrals: list[float] = []
    ordered = sorted(by_instance.items(), key=lambda item: (int(item[1][0]["n"]), item[0]))
    for name, mine in ordered:
        gaps = [g for r in mine if r["feasible"] == "True"
                and (g := _number(r["gap_pct"])) is not None]
        pis = [p for r in mine if (p := _number(r.get("primal_integral", ""))) is not None]
        reach = [t for r in mine if (t := _number(r.get("to_1pct_seconds", ""))) is not None]
        mean_gap, best_gap, pi = _mean(gaps), min(gaps, default=None), _mean(pis)
        if mean_gap is not None and best_gap is not None:
            means.append(mean_gap)
            bests.append(best_gap)
        if pi is not None:
            integrals.append(pi)
        lines.append(f"| {name} | {mine[0]['n']} | {_cell(_number(mine[0]['time_limit']), 1)} | "
                     f"{len(mine)} | {_cell(mean_gap, 2, '%')} | {_cell(best_gap, 2, '%')} | "
                     f"{_cell(pi)} | {_cell(_mean(reach))} | {len(reach)}/{len(mine)} |")
    lines.append(f"| **all** ({len(ordered)}) | | | | {_cell(_mean(means), 2, '%')} | "
                 f"{_cell(_mean(bests), 2, '%')} | {_cell(_mean(integrals))} | | |")
    seeds = sorted({r["seed"] for r in rows}, key=int)
    solvers = ", ".join(sorted({r["solver"] for r in rows}))
    published = PYVRP_PUBLISHED
    lines += ["", "### Beside PyVRP's published result", "",
              "| run | instances | seeds | time limit per instance | CPU | mean gap |",
              "|---|---|---|---|---|---|",
              f"| PyVRP v{published['version']} (published) | {published['set']} | "
              f"{published['seeds']} | {published['seconds_per_client']:g} x n s | PassMark "
              f"single-thread {published['passmark']} | {published['mean_gap_pct']:.2f}% |",
              f"| this run: {solvers} | {len(ordered)} | {len(seeds)} | "
              f"{protocol.seconds_per_client * protocol.time_scale:g} x n s (time scale "
              f"{protocol.time_scale:g}) | {machine.get('cpu', '?') if machine else '?'} | "
              f"{_cell(_mean(means), 2, '%')} |", "",
              "What differs: the time limit is the published one times the time scale; the CPU "
              "is not PassMark-rated here (its speed on the fixed workload is above); the best-"
              "known values are the instance files' .sol or routecli's registry at the time of "
              "the run; a run of fewer instances or seeds averages over those only.", ""]
    return "\n".join(lines)
