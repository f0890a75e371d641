"""Fuzz cases beyond mutated instance files: option values, PDTSP layouts, malformed solution
files, fields a problem does not use, fleets and TYPEs, JSON strictness, solution ids,
blank-line padding, output paths, torn and shared bench folders and edited checkpoints. Each
strategy builds one :class:`Case` from a random generator: the files to write into the case
folder and the steps to take on them (commands, each with the outcome an oracle written without
routecli's readers expects, and :class:`Tear` edits between them).
"""

from __future__ import annotations

import functools
import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tests.fuzz.mutations import BENIGN, Seed, must_reject, mutate, pick

Expect = str  # "accept" (exit 0), "reject" (exit 2, one line), "infeasible" (exit 1), "any"

# The documented --bks rule (routecli/limits.py states it; restated here so the oracle is not
# the code under test).
BKS_LOW, BKS_HIGH = 1e-6, 2.0**53
PADDING_SECONDS = 10  # a generous bound on reading a padded seed, whatever the machine's load
BKS_VALUES = ["inf", "-inf", "nan", "NaN", "1e-300", "0", "-0", "-5", "1e300", "1e16", "1e-7",
              "1e-6", "0.5", "1", "7542", "9007199254740992", "abc", ""]
# The documented --seed rule (routecli/resources.py states it): 0..2**32-1, for every model.
SEED_MAX = 2**32 - 1
SEED_VALUES = ["-5", "-1", "0", "1", "2147483647", "4294967295", "4294967296",
               "9223372036854775807", "18446744073709551616", "99999999999999999999"]
# Every model takes --seed: the instance each can solve fast ("tsp", "vrp": the smallest seed
# file of that kind, "kp": a small knapsack), and the options that keep it short. dact ships
# no checkpoint, so it refuses every run (one line) whatever the seed.
SEED_MODELS: dict[str, tuple[str, list[str]]] = {
    "nn": ("tsp", []), "hgs": ("tsp", ["--iterations", "30"]), "miloop": ("tsp", []),
    "sisr": ("vrp", ["--iterations", "30"]), "nds": ("vrp", ["--iterations", "3"]),
    "exact": ("kp", []), "dact": ("tsp", []),
}


@dataclass(frozen=True)
class Run:
    """One command; ``{dir}`` in ``argv`` is the case folder. ``copies`` processes start it at
    once (two benches on one folder). Checks, after exit 0 unless said otherwise:
    ``solution`` (re-cost the written file), ``bks:NAME`` (the best-known source),
    ``unchanged:PATH`` (the file's bytes are what they were before the run, whatever the exit),
    ``regular:PATH`` (a regular file, not a symlink), ``rows:DIR:N`` (``DIR/results.csv`` holds
    N complete rows, one per instance), ``within:S`` (the run took at most S seconds)."""

    argv: list[str]
    expect: Expect
    checks: tuple[str, ...] = ()
    copies: int = 1


@dataclass(frozen=True)
class Tear:
    """Cut the file ``path`` (``{dir}`` is the case folder) inside its last line, ``share`` of
    the way in: what a kill in the middle of appending a row leaves."""

    path: str
    share: float


Step = Run | Tear


@dataclass(frozen=True)
class Case:
    strategy: str
    files: dict[str, bytes]
    runs: Sequence[Step]
    detail: str
    sibling: bool = False  # a published solution lies beside the instance
    text: str = field(default="", repr=False)  # the instance text, for the mutation oracle
    links: dict[str, str] = field(default_factory=dict)  # symlink name -> target (relative)
    read_only: tuple[str, ...] = ()  # folders made unwritable (chattr +i) during the steps


Strategy = Callable[[np.random.Generator, list[Seed]], Case]


def _small(seeds: list[Seed], kind: str) -> list[Seed]:
    """Real seeds with a published solution beside them: TSPLIB (``.tsp``) or CVRPLIB (``.vrp``)."""
    return [s for s in seeds if s.sibling is not None and s.name.endswith(kind)]


def _smallest(seeds: list[Seed], kind: str) -> Seed:
    return min(_small(seeds, kind), key=lambda s: len(s.text))


def mutations(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """A mutated benchmark file through ``info`` and ``solve`` (see :mod:`.mutations`)."""
    seed = seeds[int(rng.integers(len(seeds)))]
    data, chosen = mutate(seed, rng)
    text = data.decode("utf-8", "replace")
    expect = ("reject" if must_reject(text) else
              "accept" if all(m in BENIGN for m in chosen) else "any")
    files = {seed.name: data}
    sibling = seed.sibling is not None and rng.random() < 0.5
    if sibling and seed.sibling is not None:
        files[seed.sibling[0]] = seed.sibling[1].encode()
    solve_expect = "reject" if expect == "reject" else "any" if expect == "any" else "accept"
    runs = [Run(["info", f"{{dir}}/{seed.name}"], "reject" if expect == "reject" else expect),
            Run(["solve", f"{{dir}}/{seed.name}", "--model", "nn", "--out", "{dir}/out"],
                solve_expect, ("solution",))]
    return Case("mutations", files, runs, f"{seed.name} {'+'.join(chosen)}", sibling, text)


def bks_values(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """``--bks`` values: finite and from 1e-6 to 2^53, or refused."""
    seed = pick(rng, _small(seeds, ".tsp") + _small(seeds, ".vrp"))
    assert isinstance(seed, Seed)
    value = str(pick(rng, BKS_VALUES))
    number = float(value) if re.fullmatch(r"[-+0-9.eE]+|[-+]?(inf|nan)", value, re.I) else math.nan
    good = math.isfinite(number) and BKS_LOW <= number <= BKS_HIGH
    argv = ["solve", f"{{dir}}/{seed.name}", "--model", "nn", "--json", "--bks", value]
    return Case("bks values", {seed.name: seed.text.encode()}, [Run(argv, "accept" if good else
                                                                    "reject")], f"--bks {value!r}")


def _knapsack(rng: np.random.Generator, items: int) -> str:
    """A ``.kp`` file of ``items`` random items whose first item alone always fits."""
    weights, values = rng.random(items) + 0.01, rng.random(items)
    capacity = max(float(weights[0]), float(weights.sum()) / 3)
    return (f"NAME : kp\nTYPE : KP\nITEMS : {items}\nCAPACITY : {capacity!r}\nITEM_SECTION\n"
            + "".join(f"{float(w)!r} {float(v)!r}\n" for w, v in zip(weights, values, strict=True)))


def seed_values(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """``--seed`` values for every model: one rule (0..2**32-1), a one-line error outside it."""
    value = str(pick(rng, SEED_VALUES))
    model = str(pick(rng, list(SEED_MODELS)))
    kind, options = SEED_MODELS[model]
    if kind == "kp":
        name, text = "kp.kp", _knapsack(rng, int(rng.integers(3, 12)))
    else:
        seed = _smallest(seeds, f".{kind}")
        name, text = seed.name, seed.text
    good = 0 <= int(value) <= SEED_MAX and model != "dact"
    argv = ["solve", f"{{dir}}/{name}", "--model", model, *options, "--seed", value, "--json"]
    return Case("seeds", {name: text.encode()}, [Run(argv, "accept" if good else "reject")],
                f"{model} --seed {value}")


def _pdtsp_text(rng: np.random.Generator, requests: int, broken: str | None) -> tuple[str, str]:
    """A PDTSP file with a random consistent pairing (ids 2..2r+1 paired at random, rows in
    random order), or one ``broken`` in a named way."""
    n = 2 * requests + 1
    ids = rng.permutation(np.arange(2, n + 1))
    pairs = np.zeros((n + 1, 2), np.int64)  # by file id: pickup, delivery
    for k in range(requests):
        p, d = int(ids[2 * k]), int(ids[2 * k + 1])
        pairs[p, 1], pairs[d, 0] = d, p
    if broken == "wrong partner" and requests > 1:
        d = int(ids[1])
        pairs[d, 0] = int(ids[2])  # names another pickup
    elif broken == "both":
        pairs[int(ids[0]), 0] = int(ids[3 % len(ids)])
    elif broken == "neither":
        pairs[int(ids[0])] = 0
    elif broken == "depot paired":
        pairs[1, 1] = int(ids[1])
    comment = ("COMMENT : " + "a long comment " * int(rng.integers(0, 400)) + "\n"
               if rng.random() < 0.5 else "")
    coords = rng.integers(0, 1000, (n, 2))
    rows = [f"{i} {pairs[i, 0]} {pairs[i, 1]}" for i in rng.permutation(np.arange(1, n + 1))]
    text = (f"NAME : pd\n{comment}TYPE : PDTSP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : EUC_2D\n"
            "NODE_COORD_SECTION\n" + "".join(f"{i + 1} {x} {y}\n" for i, (x, y) in enumerate(coords))
            + "PICKUP_AND_DELIVERY_SECTION\n" + "\n".join(rows) + "\nDEPOT_SECTION\n1\n-1\nEOF\n")
    return text, f"{requests} requests, {broken or 'consistent'}, comment {len(comment)} chars"


def pdtsp_layouts(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """Any consistent pairing is solved, its tour written in the file's numbering (``validate``
    reads it back feasible); an inconsistent one is refused."""
    broken = None if rng.random() < 0.6 else str(pick(rng, ["wrong partner", "both", "neither",
                                                           "depot paired"]))
    text, detail = _pdtsp_text(rng, int(rng.integers(2, 9)), broken)
    if broken is None:
        runs = [Run(["solve", "{dir}/pd.vrp", "--model", "nn", "--out", "{dir}/out"], "accept",
                    ("solution",)),
                Run(["validate", "{dir}/pd.vrp", "{dir}/out/pd.tour", "--json"], "accept")]
    else:
        runs = [Run(["solve", "{dir}/pd.vrp", "--model", "nn", "--out", "{dir}/out"], "reject")]
    return Case("PDTSP layouts", {"pd.vrp": text.encode()}, runs, detail)


def _sol_lines(seed: Seed) -> list[str]:
    assert seed.sibling is not None
    return seed.sibling[1].splitlines()


def malformed_solutions(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """A published solution with one defect, through ``validate``: unreadable lines and ids are
    exit 2, a missing or repeated node exit 1 for every problem, benign changes exit 0."""
    seed = pick(rng, _small(seeds, ".tsp") + _small(seeds, ".vrp"))
    assert isinstance(seed, Seed) and seed.sibling is not None
    name, _ = seed.sibling
    lines = _sol_lines(seed)
    tour = name.endswith(".tour")
    first = 0 if tour else 2  # where the ids of a line start ("Route #k:" first)
    body = ([k for k, line in enumerate(lines) if line.split() and line.split() != ["-1"]
             and all(w.isdigit() for w in line.split())] if tour else
            [k for k, line in enumerate(lines) if line.lower().startswith("route")])
    k = int(pick(rng, body))
    n = sum(len(lines[j].split()) for j in body) if tour else None
    defects = ["junk line", "twenty digits", "underscore", "arabic digit", "id beyond",
               "drop id", "repeat id", "blank lines", "comment", "crlf"]
    defects += ["exponent id"] if tour else ["cost nan", "cost abc", "cost inf"]
    defect = str(pick(rng, defects))
    expect: Expect = "reject"
    words = lines[k].split()
    if defect == "junk line":
        lines.insert(k, "this line is not part of a solution")
    elif defect in ("twenty digits", "underscore", "arabic digit", "id beyond", "exponent id"):
        beyond = str((n or 10_000) + int(rng.integers(1, 1000)))
        new = {"twenty digits": "9" * 20, "underscore": "1_0", "arabic digit": "\u0661",
               "id beyond": beyond if tour else "9" * 9,
               "exponent id": str(pick(rng, ["1e2", "1e4"]))}[defect]
        words[-1] = new
        lines[k] = " ".join(words)
    elif defect == "drop id":
        if len(words) > first + 1:
            lines[k] = " ".join(words[:-1])
        else:
            del lines[k]
        expect = "infeasible"
    elif defect == "repeat id":
        lines[k] = " ".join([*words, words[-1]])
        expect = "infeasible"
    elif defect in ("cost nan", "cost abc", "cost inf"):
        lines = [f"Cost {defect.split()[1]}" if line.startswith("Cost") else line for line in lines]
    elif defect == "blank lines":
        lines.insert(k, "   ")
        lines.insert(0, "")
        expect = "accept"
    elif defect == "comment":
        expect = "accept" if not tour else "reject"  # '#' comments belong to .sol files
        lines.insert(0, "# a comment")
    elif defect == "crlf":
        lines = [f"{line}\r" for line in lines]
        expect = "accept"
    files = {seed.name: seed.text.encode(), "given" + name[name.index("."):]:
             ("\n".join(lines) + "\n").encode()}
    argv = ["validate", f"{{dir}}/{seed.name}", "{dir}/given" + name[name.index("."):], "--json"]
    return Case("malformed solutions", files, [Run(argv, expect)], f"{name}: {defect}")


def knapsack_ids(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """Item ids of a knapsack ``.sol``: digits 0-9 only, within the instance."""
    items = int(rng.integers(3, 30))
    kp = _knapsack(rng, items)
    token = str(pick(rng, ["1", "9" * 20, "1_0", "\u0661", str(items + 1), "0", "-1", "2.0", "1e1"]))
    good = token == "1"
    files = {"kp.kp": kp.encode(), "kp.sol": f"Items: {token}\nValue 0\n".encode()}
    argv = ["validate", "{dir}/kp.kp", "{dir}/kp.sol", "--json"]
    return Case("solution ids", files, [Run(argv, "accept" if good else "reject")],
                f"Items: {token!r}")


def _insert_header(text: str, line: str) -> str:
    head, _, tail = text.partition("\n")
    return f"{head}\n{line}\n{tail}"


def _x_seed(seeds: list[Seed]) -> Seed:
    return _smallest(seeds, ".vrp")


def unused_fields(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """Numbers in fields the problem does not use are checked (or the field refused)."""
    seed = _x_seed(seeds)
    text = seed.text
    n = int(re.search(r"DIMENSION\s*:\s*(\d+)", text).group(1))  # type: ignore[union-attr]
    kind = str(pick(rng, ["service section", "service field", "vehicles", "num vehicles",
                          "vrptw prizes"]))
    bad = str(pick(rng, ["nan", "inf", "-3", "abc", "1e300"]))
    good = rng.random() < 0.3
    if kind == "service section":
        values = ["0"] + ["1"] * (n - 1)
        values[int(rng.integers(1, n))] = "1" if good else bad
        section = "SERVICE_TIME_SECTION\n" + "".join(f"{i + 1} {v}\n" for i, v in enumerate(values))
        text = text.replace("DEPOT_SECTION", section + "DEPOT_SECTION")
    elif kind == "service field":
        text = _insert_header(text, f"SERVICE_TIME : {'5' if good else bad}")
    elif kind in ("vehicles", "num vehicles"):
        key = "VEHICLES" if kind == "vehicles" else "NUM_VEHICLES"
        value = str(10 * n) if good else str(pick(rng, [bad, "0", "2.5", ""]))
        text = _insert_header(text, f"{key} : {value}")
    else:
        windows = "TIME_WINDOW_SECTION\n" + "".join(f"{i + 1} 0 100000000\n" for i in range(n))
        prizes = ["0"] + ["5"] * (n - 1)
        prizes[int(rng.integers(1, n))] = "5" if good else bad
        prize = "PRIZE_SECTION\n" + "".join(f"{i + 1} {v}\n" for i, v in enumerate(prizes))
        text = re.sub(r"TYPE\s*:\s*CVRP", "TYPE : VRPTW", text)
        text = text.replace("DEPOT_SECTION", windows + prize + "DEPOT_SECTION")
    runs = [Run(["info", f"{{dir}}/{seed.name}"], "accept" if good else "reject"),
            Run(["solve", f"{{dir}}/{seed.name}", "--model", "nn", "--out", "{dir}/out"],
                "accept" if good else "reject", ("solution",))]
    return Case("unused fields", {seed.name: text.encode()}, runs,
                f"{kind} {'valid' if good else bad}")


def fleet_and_type(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """TYPE values routecli does not solve, a non-zero depot demand, and a declared fleet that
    the published solution's routes exceed (infeasible) or fit (feasible)."""
    seed = _x_seed(seeds)
    assert seed.sibling is not None
    text = seed.text
    kind = str(pick(rng, ["type", "depot demand", "fleet"]))
    files = {seed.sibling[0]: seed.sibling[1].encode()}
    if kind == "type":
        value = str(pick(rng, ["ATSP", "HCP", "SOP", "TOUR", "VRPTW", "CVRPTW", "PCVRP", "XYZ",
                               "CVRP"]))
        text = re.sub(r"^TYPE\s*:.*$", f"TYPE : {value}", text, count=1, flags=re.MULTILINE)
        runs = [Run(["info", f"{{dir}}/{seed.name}"], "accept" if value == "CVRP" else "reject")]
        detail = f"TYPE {value}"
    elif kind == "depot demand":
        demand = int(rng.integers(0, 3))
        text = re.sub(r"(DEMAND_SECTION\s*\n\s*1\s+)\d+", rf"\g<1>{demand}", text)
        runs = [Run(["info", f"{{dir}}/{seed.name}"], "accept" if demand == 0 else "reject")]
        detail = f"depot demand {demand}"
    else:
        routes = sum(1 for line in seed.sibling[1].splitlines() if line.startswith("Route"))
        fleet = int(rng.integers(1, routes + 3))
        text = _insert_header(text, f"VEHICLES : {fleet}")
        runs = [Run(["validate", f"{{dir}}/{seed.name}", f"{{dir}}/{seed.sibling[0]}", "--json"],
                    "accept" if fleet >= routes else "infeasible")]
        detail = f"VEHICLES {fleet} for {routes} routes"
    files[seed.name] = text.encode()
    return Case("fleet and TYPE", files, runs, detail, sibling=True)


def json_strictness(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """``--json`` lines parse with a strict parser where a number is undefined: a zero-cost
    instance (every node at one point) beside its tour, solved and validated."""
    n = int(rng.integers(2, 8))
    x, y = (int(v) for v in rng.integers(0, 100, 2))
    text = (f"NAME : zero\nTYPE : TSP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : EUC_2D\n"
            "NODE_COORD_SECTION\n" + "".join(f"{i + 1} {x} {y}\n" for i in range(n)) + "EOF\n")
    tour = "TOUR_SECTION\n" + "".join(f"{i + 1}\n" for i in rng.permutation(n)) + "-1\nEOF\n"
    files = {"zero.tsp": text.encode(), "zero.opt.tour": tour.encode()}
    runs = [Run(["solve", "{dir}/zero.tsp", "--model", "nn", "--json"], "accept"),
            Run(["validate", "{dir}/zero.tsp", "{dir}/zero.opt.tour", "--json"], "accept")]
    return Case("JSON strictness", files, runs, f"zero-cost TSP, n={n}", sibling=True)


def blank_padding(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """Blank lines (up to 65,536) before or inside the header: read, and the published solution
    beside the file still found."""
    seed = pick(rng, _small(seeds, ".tsp") + _small(seeds, ".vrp"))
    assert isinstance(seed, Seed) and seed.sibling is not None
    count = int(pick(rng, [1, 100, 4096, 65_536]))
    lines = seed.text.split("\n")
    at = int(rng.integers(0, 3))
    text = "\n".join(lines[:at] + [""] * count + lines[at:])
    files = {seed.name: text.encode(), seed.sibling[0]: seed.sibling[1].encode()}
    # 65,536 blank lines took a quadratic regex ~30 s; a padded file reads in about a second
    runs = [Run(["info", f"{{dir}}/{seed.name}"], "accept",
                (f"bks:{seed.sibling[0]}", f"within:{PADDING_SECONDS}"))]
    return Case("blank-line padding", files, runs, f"{count} blank lines at line {at + 1}",
                sibling=True)


USER_TEXT = b"my own notes, not routecli's\n"
# First lines that mention routecli without being the mark it writes (issue 39).
NOT_THE_MARK = ["# draft: NOT written by routecli", "# written by routecli? no, by hand",
                "COMMENT : my tour, not written by routecli"]


def output_paths(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """Where outputs may go: ``bench --out`` into a folder of the user's, ``--csv`` onto a file
    of the user's or through a symlink, an unwritable folder, and ``--out`` onto a file whose
    first line mentions "written by routecli" without being routecli's mark. A file routecli
    did not write is never replaced without ``--force``, and a refusal is one line."""
    seed = _smallest(seeds, ".vrp")
    inst = f"{{dir}}/{seed.name}"
    files = {seed.name: seed.text.encode()}
    kind = str(pick(rng, ["foreign folder", "foreign csv", "read-only folder", "symlinked csv",
                          "not the mark"]))
    links: dict[str, str] = {}
    read_only: tuple[str, ...] = ()
    force = rng.random() < 0.25
    if kind == "foreign folder":
        mine = str(pick(rng, ["report.md", "gap_vs_size.png", "results.csv", "solutions/x.sol",
                              seed.name]))
        files[f"rep/{mine}"] = seed.text.encode() if mine == seed.name else USER_TEXT
        argv = ["bench", inst, "-m", "nn", "-o", "{dir}/rep"]
        # a forced bench may replace the user's files, but a results.csv of another layout
        # cannot be resumed: refusing it or starting over are both sound
        forced = "any" if mine == "results.csv" else "accept"
        runs: list[Step] = [Run([*argv, "--force"], forced) if force else
                            Run(argv, "reject", (f"unchanged:rep/{mine}",))]
        detail = f"bench --out a folder holding {mine}{' --force' if force else ''}"
    elif kind == "foreign csv":
        files["mine.csv"] = b"my,numbers\n1,2\n"
        argv = ["solve", inst, "-m", "nn", "--csv", "{dir}/mine.csv"]
        runs = [Run([*argv, "--force"], "accept") if force else
                Run(argv, "reject", ("unchanged:mine.csv",))]
        detail = f"--csv onto the user's file{' --force' if force else ''}"
    elif kind == "read-only folder":
        read_only = ("ro",)
        target = str(pick(rng, ["{dir}/ro", "{dir}/ro/run"]))
        command = str(pick(rng, ["bench", "solve"]))
        argv = (["bench", inst, "-m", "nn", "-o", target] if command == "bench" else
                ["solve", inst, "-m", "nn", "-o", target.replace("/run", "") + "/x.sol"])
        runs = [Run(argv, "reject")]
        detail = f"{command} --out {target.replace('{dir}/', '')} (immutable)"
    elif kind == "symlinked csv":
        links["link.csv"] = "kept.csv"
        own = rng.random() < 0.5  # the link points at a summary routecli wrote, or the user's
        if not own:
            files["kept.csv"] = b"my,numbers\n1,2\n"
        runs = [Run(["solve", inst, "-m", "nn", "--csv", "{dir}/kept.csv"], "accept")] if own \
            else []
        runs.append(Run(["solve", inst, "-m", "nn", "--csv", "{dir}/link.csv"],
                        "accept" if own else "reject",
                        ("unchanged:kept.csv", "regular:link.csv") if own else
                        ("unchanged:kept.csv",)))
        detail = f"--csv through a symlink to {'a routecli' if own else 'the user'} file"
    else:
        line = str(pick(rng, NOT_THE_MARK))
        files["notes.sol"] = f"{line}\nRoute #1: 1 2\n".encode()
        runs = [Run(["solve", inst, "-m", "nn", "-o", "{dir}/notes.sol"], "reject",
                    ("unchanged:notes.sol",))]
        detail = f"--out onto a file starting {line!r}"
    return Case("output paths", files, runs, detail, links=links, read_only=read_only)


def _bench_set(rng: np.random.Generator, seeds: list[Seed]) -> tuple[dict[str, bytes], int]:
    """Two to four of the smallest TSPLIB seeds in ``set/``: a bench that ``nn`` runs in
    moments."""
    small = sorted(_small(seeds, ".tsp"), key=lambda s: len(s.text))[:6]
    count = int(rng.integers(2, 5))
    chosen = [small[int(k)] for k in rng.choice(len(small), count, replace=False)]
    return {f"set/{s.name}": s.text.encode() for s in chosen}, count


def torn_results(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """A bench killed while appending a row leaves ``results.csv`` cut mid-line: the resumed
    run drops (or repairs) the torn row, solves that instance again, and ends with one
    complete row per instance."""
    files, count = _bench_set(rng, seeds)
    argv = ["bench", "{dir}/set", "-m", "nn", "-o", "{dir}/run"]
    share = float(pick(rng, [0.0, 0.01, float(rng.random()), 0.99, 1.0]))
    runs: list[Step] = [Run(argv, "accept", (f"rows:run:{count}",)),
                        Tear("{dir}/run/results.csv", share),
                        Run(argv, "accept", (f"rows:run:{count}",))]
    return Case("torn results", files, runs, f"{count} instances, last row cut at {share:.2f}")


def concurrent_bench(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """Two or three ``bench`` processes started at once on one ``--out``: one writes, the others
    finish or are refused with one line, and every instance has one row."""
    files, count = _bench_set(rng, seeds)
    copies = int(rng.integers(2, 4))
    argv = ["bench", "{dir}/set", "-m", "nn", "-o", "{dir}/run"]
    runs: list[Step] = [Run(argv, "any", (f"rows:run:{count}",), copies=copies)]
    return Case("concurrent bench", files, runs, f"{copies} processes, {count} instances")


@functools.lru_cache(maxsize=4)
def _checkpoint(name: str) -> dict[str, Any]:
    """A shipped checkpoint, loaded once (torch only where this strategy runs)."""
    import torch

    from routecli.train.checkpoint import shipped

    return torch.load(shipped(name), map_location="cpu", weights_only=True)


def edited_checkpoints(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """A shipped checkpoint with one integer of its configuration edited and its weights' digest
    kept: a size far beyond the weights (``layers`` 10**6) is refused with one line before
    anything is allocated, the unedited file solves, and a small edit may go either way (a
    head count that keeps every shape is a model the weights fit)."""
    import torch

    name, model, kind, options = pick(rng, [("miloop-tsp.pt", "miloop", ".tsp", []),
                                            ("nds-cvrp.pt", "nds", ".vrp", ["--iterations", "3"])])
    data = _checkpoint(name)
    keys = sorted(k for k, v in data["config"].items()
                  if isinstance(v, int) and not isinstance(v, bool))
    key = str(pick(rng, keys))
    old = int(data["config"][key])
    value = int(pick(rng, [10**6, 10**9, 2**40, -1, 0, old, old + 1, 2 * old]))
    huge = value >= 10**6 or value < 0
    buffer = io.BytesIO()
    torch.save({**data, "config": {**data["config"], key: value}}, buffer)
    seed = _smallest(seeds, kind)
    argv = ["solve", f"{{dir}}/{seed.name}", "-m", model, *options, "--checkpoint",
            "{dir}/edited.pt", "--json"]
    expect = "reject" if huge else "accept" if value == old else "any"
    return Case("edited checkpoints", {seed.name: seed.text.encode(), "edited.pt":
                                       buffer.getvalue()},
                [Run(argv, expect, ("within:20",))], f"{name} {key} {old} -> {value}")


# --- round 4: GEO files, crafted checkpoints, option ranges, huge sizes, written paths --------

DATA = Path(__file__).resolve().parents[1] / "data"
# GEO coordinates are DDD.MM degrees (TSPLIB): latitudes within 90, longitudes within 180.
GEO_LAT, GEO_LON = 90.0, 180.0


def _geo_text(rng: np.random.Generator, n: int, bad: str | None) -> str:
    """A GEO TSP of ``n`` cities at random DDD.MM places (minutes below 60), or with one
    coordinate that is no latitude or longitude."""
    lat = rng.integers(-89, 90, n) + rng.integers(0, 60, n) / 100
    lon = rng.integers(-179, 180, n) + rng.integers(0, 60, n) / 100
    if bad is not None:
        k = int(rng.integers(n))
        limit = GEO_LAT if bad == "latitude" else GEO_LON  # just past it: 30 minutes more
        value = float(pick(rng, [1000.0, -5000.0, limit + 0.3, -limit - 0.3, 361.0]))
        if bad == "latitude":
            lat[k] = value
        else:
            lon[k] = value
    rows = "".join(f"{i + 1} {a:.2f} {b:.2f}\n" for i, (a, b) in enumerate(zip(lat, lon,
                                                                                strict=True)))
    return (f"NAME : geo{n}\nTYPE : TSP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : GEO\n"
            f"NODE_COORD_SECTION\n{rows}EOF\n")


def geo_files(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """TSPLIB GEO files (d(i, i) = 1 under the GEO rule, which PyVRP refuses) solved by the
    default model, by bench in a set beside a EUC_2D file, and any coordinate file read with
    ``--round geo``: places on the sphere are solved (the written tour re-costs to the report),
    coordinates that are no latitude or longitude refused."""
    kind = str(pick(rng, ["solve", "bench", "round geo", "burma14"]))
    bad = None if rng.random() < 0.6 else str(pick(rng, ["latitude", "longitude"]))
    n = int(rng.integers(3, 30))
    text = (DATA / "geo_burma14.tsp").read_text() if kind == "burma14" else _geo_text(rng, n, bad)
    expect: Expect = "reject" if bad and kind != "burma14" else "accept"
    hgs = ["--model", "hgs", "--iterations", "200"]
    if kind in ("solve", "burma14"):
        runs = [Run(["solve", "{dir}/geo.tsp", *hgs, "--out", "{dir}/out"], expect,
                    ("solution",))]
        files = {"geo.tsp": text.encode()}
    elif kind == "bench":
        tiny = _smallest(seeds, ".tsp")
        files = {"set/geo.tsp": text.encode(), f"set/{tiny.name}": tiny.text.encode()}
        runs = [Run(["bench", "{dir}/set", *hgs, "--out", "{dir}/run"], expect,
                    () if bad else ("rows:run:2",))]
    else:
        seed = _smallest(seeds, ".tsp")
        files = {"geo.tsp": seed.text.encode()}
        coords = [float(v) for line in seed.text.splitlines()
                  for v in line.split()[1:3] if line.split()[:1] and line.split()[0].isdigit()]
        inside = all(abs(v) <= GEO_LAT for v in coords)  # a loose oracle: small files only
        runs = [Run(["solve", "{dir}/geo.tsp", *hgs, "--round", "geo"],
                    "accept" if inside else "reject")]
        bad = None if inside else "coordinates"
    return Case("GEO files", files, runs, f"{kind}, {n} cities, {bad or 'on the sphere'}")


@functools.lru_cache(maxsize=1)
def _crafted_sources() -> dict[str, dict[str, Any]]:
    return {name: _checkpoint(name) for name in ("miloop-tsp.pt", "miloop-cvrp.pt",
                                                "nds-cvrp.pt", "nds-vrptw.pt")}


CRAFTS = ["text", "empty", "sparse", "meta", "nan", "inf", "zero", "clip nan", "other problem",
          "folder", "unedited"]
# Where weights are read, each with the instance or options it needs (tiny, so a good file
# finishes in seconds); {ckpt} is the file, {problem} the checkpoint's problem.
READERS = {
    "solve miloop": ("miloop-tsp.pt", ["solve", "{tsp}", "-m", "miloop", "--checkpoint",
                                       "{ckpt}", "--json"]),
    "solve nds": ("nds-cvrp.pt", ["solve", "{vrp}", "-m", "nds", "--iterations", "2",
                                  "--checkpoint", "{ckpt}", "--json"]),
    "analyze memory": ("miloop-tsp.pt", ["analyze", "memory", "--checkpoint", "{ckpt}",
                                         "--size", "5", "--num", "1"]),
    "train --init": ("miloop-tsp.pt", ["train", "--problem", "tsp", "--init", "{ckpt}", "--out",
                                       "{dir}/run", "--size", "6", "--steps", "1", "--batch",
                                       "2", "--rollouts", "2", "--val-size", "6",
                                       "--val-instances", "1", "--val-every", "100",
                                       "--val-time-limit", "0.01", "--no-compile"]),
    "train-nds --init": ("nds-cvrp.pt", ["train-nds", "--problem", "cvrp", "--init", "{ckpt}",
                                         "--out", "{dir}/run", "--size", "10", "--steps", "1",
                                         "--batch", "1", "--rollouts", "2", "--remove", "3",
                                         "--episode", "2", "--burn-in", "1", "--val-every",
                                         "100", "--val-instances", "1", "--val-iterations",
                                         "1"]),
    "train --resume": ("miloop-tsp.pt", ["train", "--problem", "tsp", "--out", "{dir}/run",
                                         "--resume", "--size", "6", "--steps", "1", "--batch",
                                         "2", "--rollouts", "2"]),
}
OTHER = {"miloop-tsp.pt": "miloop-cvrp.pt", "nds-cvrp.pt": "nds-vrptw.pt"}


def _crafted(craft: str, source: str) -> bytes | None:
    """The bytes of a checkpoint edited as ``craft`` says, digests recomputed where the edit
    keeps tensors a digest can read (``None``: a folder)."""
    import torch

    from routecli.train.checkpoint import config_digest, tensor_digest

    if craft == "text":
        return b"not a checkpoint\n"
    if craft == "empty":
        return b""
    if craft == "folder":
        return None
    data = _crafted_sources()[OTHER[source] if craft == "other problem" else source]
    model = {k: v.clone() for k, v in data["model"].items()}
    config = dict(data["config"])
    name = sorted(model)[len(model) // 2]
    if craft == "sparse":
        model[name] = model[name].to_sparse()
    elif craft == "meta":
        model[name] = torch.empty(model[name].shape, device="meta")
    elif craft in ("nan", "inf"):
        model = {k: torch.full_like(v, float(craft)) for k, v in model.items()}
    elif craft == "zero":
        model = {k: torch.zeros_like(v) for k, v in model.items()}
    elif craft == "clip nan":
        config["clip"] = float("nan")
    edited = {**data, "model": model, "config": config}
    if craft not in ("sparse", "meta"):
        edited.update(sha256=tensor_digest(model), config_sha256=config_digest(config))
    buffer = io.BytesIO()
    torch.save(edited, buffer)
    return buffer.getvalue()


def crafted_checkpoints(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """A file that is no trained model, through every command that reads weights: short text,
    an empty file, a sparse or meta tensor, weights all NaN, inf or zero with their digest
    recomputed, a configuration with clip=NaN, another problem's checkpoint, a folder, and a
    policy checkpoint where --resume wants a run's last.pt. Each is one line at once; the
    unedited file is read (the run then goes as far as its options take it)."""
    reader = str(pick(rng, list(READERS)))
    craft = str(pick(rng, CRAFTS))
    source, argv = READERS[reader]
    data = _crafted(craft, source)
    # a policy is never a run's state: as last.pt every craft is refused
    target = "run/last.pt" if reader == "train --resume" else "w.pt"
    files = {f"{target}/notes.txt" if data is None else target: data or b""}
    tsp, vrp = _smallest(seeds, ".tsp"), _smallest(seeds, ".vrp")
    files[tsp.name], files[vrp.name] = tsp.text.encode(), vrp.text.encode()
    filled = [a.format(ckpt="{dir}/" + target, tsp="{dir}/" + tsp.name,
                       vrp="{dir}/" + vrp.name, dir="{dir}") for a in argv]
    good = craft == "unedited" and reader != "train --resume"
    expect: Expect = "any" if good else "reject"
    return Case("crafted checkpoints", files, [Run(filled, expect, ("within:60",))],
                f"{reader}: {craft} ({source})")


@functools.lru_cache(maxsize=1)
def _numeric_options() -> list[tuple[tuple[str, ...], str, bool, float, float]]:
    """Every numeric option of every command: (command path, flag, integer?, min, max), read
    from the application as its --help states them."""
    import typing

    import typer

    from routecli.cli.app import app

    found = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))
        for param in getattr(command, "params", []) if not hasattr(command, "commands") else []:
            kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
            kinds = typing.get_args(kind) or (kind,)
            if any(k in (int, float) for k in kinds) and not param.hidden:
                found.append((path, param.opts[0], int in kinds, param.min, param.max))

    walk(typer.main.get_command(app), ())
    return found


# Commands whose runs end in moments with the context below, so that a value inside the
# range may run: the rest see values outside it only.
CHEAP = {("solve",): ["{tsp}", "-m", "nn"], ("validate",): ["{tsp}", "{tour}"],
         ("bench",): ["{tsp}", "-m", "nn", "-o", "{dir}/run"],
         ("generate",): ["tsp", "--size", "5", "-o", "{dir}/g.npz"],
         ("plot", "solution"): ["{tsp}", "{tour}", "-o", "{dir}/p.png"]}
NOT_NUMBERS = ["nan", "NaN", "inf", "-inf", "1e999", "", "abc", "0x10", "1,5", "١"]


def option_ranges(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """Every numeric option of every command, with a value that is no number, NaN or an
    infinity (refused by every option), just outside its stated range (refused), or, for the
    commands that finish in moments, at an end of it (read, and the run goes on)."""
    path, flag, integer, low, high = pick(rng, _numeric_options())
    cheap = tuple(path) in CHEAP
    kind = str(pick(rng, ["not a number", "below", "above", *(["inside"] * 2 * cheap)]))
    if kind == "not a number":
        value = str(pick(rng, NOT_NUMBERS + (["2.5", "1e3"] if integer else [])))
    elif kind == "below":
        value = str(int(low) - 1) if integer else repr(float(low) - max(1.0, abs(low)))
    elif kind == "above":
        value = str(int(high) + int(pick(rng, [1, 10**6, 2**64]))) if integer else \
            repr(float(high) * 2 + 1)
    else:  # the low end (a high count may be slow, however valid: --jobs 1024)
        value = str(int(low) + int(rng.integers(2)) if int(low) < int(high) else int(low)) \
            if integer else repr(float(pick(rng, [low, high])))
    seed = next(s for s in _small(seeds, ".tsp") if s.sibling and s.sibling[0].endswith(".tour"))
    assert seed.sibling is not None
    context = [a.format(tsp="{dir}/" + seed.name, tour="{dir}/" + seed.sibling[0], dir="{dir}")
               for a in CHEAP.get(tuple(path), [])]
    files = {seed.name: seed.text.encode(), seed.sibling[0]: seed.sibling[1].encode()}
    expect: Expect = "any" if kind == "inside" else "reject"
    argv = [*path, *context, f"{flag}={value}"]  # "=": a value may start with "-"
    return Case("option ranges", files, [Run(argv, expect, ("within:60",))],
                f"{' '.join(path)} {flag} {value!r} ({kind}; range {low}..{high})")


def huge_sizes(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """Sizes inside every stated range whose product the machine cannot hold, under the
    worker's address-space limit: refused at once with the memory they would need, nothing
    written."""
    big = int(10 ** rng.uniform(6, 7))
    many = int(10 ** rng.uniform(4, 7))
    kind = str(pick(rng, ["generate", "generate file", "probe set", "probe pairs",
                          "analyze memory", "train", "train-nds", "compare-pe", "solve hgs"]))
    files: dict[str, bytes] = {}
    argv = {
        "generate": ["generate", str(pick(rng, ["tsp", "cvrp", "kp", "vrptw"])), "--size",
                     str(big), "--num", str(many), "-o", "{dir}/g.npz"],
        "generate file": ["generate", "cvrp", "--size", str(big), "--num", str(many),
                          "--format", "file", "-o", "{dir}/g"],
        "probe set": ["probe", "--set", f"cvrp-{big * 100}", "--num", "1"],
        "probe pairs": ["probe", "--pairs", str(big), "--num", str(many)],
        "analyze memory": ["analyze", "memory", "--size", str(big), "--num", "1"],
        "train": ["train", "--size", str(big // 10), "--steps", "1", "--batch", "64",
                  "--rollouts", "100", "--out", "{dir}/run"],
        "train-nds": ["train-nds", "--size", str(big), "--out", "{dir}/run"],
        "compare-pe": ["compare-pe", "--size", str(big // 10), "--budget", "smoke", "--out",
                       "{dir}/run"],
        "solve hgs": ["solve", "{dir}/big.tsp", "-m", "hgs", "--iterations", "1"],
    }[kind]
    if kind == "solve hgs":  # a file's size, not an option: the distance matrix is checked too
        n = 60_000
        files["big.tsp"] = (f"NAME : big\nTYPE : TSP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : "
                            "EUC_2D\nNODE_COORD_SECTION\n" + "".join(
                                f"{i + 1} {i % 1000} {i // 1000}\n" for i in range(n))
                            + "EOF\n").encode()
    return Case("huge sizes", files, [Run(argv, "reject", ("within:30",))],
                " ".join(a for a in argv if not a.startswith("{dir}")))


USER_FILES = {"user.csv": b"my,numbers\n1,2\n", "user.json": b'{"mine": 1}\n',
              "user.png": b"\x89PNG\r\n\x1a\nnot routecli's", "user.npz": b"my numbers\n"}


def written_paths(rng: np.random.Generator, seeds: list[Seed]) -> Case:
    """Where every command that writes may write: an empty name, a name too long for the file
    system, a file where a folder is written, a file of the user's that routecli did not
    write (tables, pictures, batches, generated instances, a compare-pe folder), and one file
    for two outputs. Each is one line before any work, and the user's file stays as it was."""
    tsp = next(s for s in _small(seeds, ".tsp") if s.sibling and s.sibling[0].endswith(".tour"))
    assert tsp.sibling is not None
    files = {tsp.name: tsp.text.encode(), tsp.sibling[0]: tsp.sibling[1].encode(),
             **USER_FILES}
    inst, tour = "{dir}/" + tsp.name, "{dir}/" + tsp.sibling[0]
    writers = {  # a command and the option that names what it writes
        "solve --out": ["solve", inst, "-m", "nn", "--out"],
        "solve --csv": ["solve", inst, "-m", "nn", "--csv"],
        "bench": ["bench", inst, "-m", "nn", "--out"],
        "generate": ["generate", "tsp", "--size", "5", "--out"],
        "generate file": ["generate", "tsp", "--size", "5", "--format", "file", "--out"],
        "train": ["train", "--size", "6", "--steps", "1", "--batch", "1", "--rollouts", "2",
                  "--out"],
        "train-nds": ["train-nds", "--size", "10", "--steps", "1", "--out"],
        "compare-pe": ["compare-pe", "--size", "6", "--budget", "smoke", "--out"],
        "probe": ["probe", "--set", "cvrp-10", "--num", "2", "--out"],
        "analyze anisometry": ["analyze", "anisometry", "--set", "cvrp-10", "--num", "2",
                               "--out"],
        "analyze entropy": ["analyze", "entropy", "--set", "cvrp-10", "--num", "2", "--out"],
        "analyze memory --out": ["analyze", "memory", "--size", "5", "--num", "1", "--out"],
        "analyze memory --figure": ["analyze", "memory", "--size", "5", "--num", "1",
                                    "--figure"],
        "plot solution": ["plot", "solution", inst, tour, "--out"],
    }
    folders = ("bench", "generate file", "train", "train-nds", "compare-pe")
    writer = str(pick(rng, list(writers)))
    kinds = ["empty", "too long", "user file"] + (["a file, not a folder"] if writer in folders
                                                  else [])
    kinds += ["one file twice"] if writer == "solve --csv" else []
    kind = str(pick(rng, kinds))
    checks: tuple[str, ...] = tuple(f"unchanged:{n}" for n in USER_FILES)
    if kind == "empty":
        target = str(pick(rng, ["", " "]))
    elif kind == "too long":
        target = "{dir}/" + str(pick(rng, ["a" * 256 + ".csv", "/".join(["d"] * 2100)]))
    elif kind == "a file, not a folder":
        target = "{dir}/user.csv"
    elif kind == "one file twice":
        target = "{dir}/both.csv"
        writers[writer] = [*writers[writer][:-1], "--out", "{dir}/both.csv", "--csv"]
    else:
        target, extra = {
            "solve --out": ("{dir}/mine.tour", {"mine.tour": b"TOUR_SECTION\n1\n-1\n"}),
            "solve --csv": ("{dir}/user.csv", {}),
            "bench": ("{dir}/rep", {"rep/report.md": b"my notes\n"}),
            "generate": ("{dir}/user.npz", {}),
            "generate file": ("{dir}/gen", {"gen/tsp-5-s0-0.tsp": b"my tour notes\n"}),
            "train": ("{dir}/mine", {"mine/last.pt": b"not a run\n"}),
            "train-nds": ("{dir}/mine", {"mine/last.pt": b"not a run\n"}),
            "compare-pe": ("{dir}/cmp", {"cmp/rows.csv": b"a,b\n1,2\n"}),
            "analyze memory --figure": ("{dir}/user.png", {}),
            "plot solution": ("{dir}/user.png", {}),
        }.get(writer, ("{dir}/" + str(pick(rng, ["user.csv", "user.json"])), {}))
        files.update(extra)
        checks += tuple(f"unchanged:{n}" for n in extra)
    argv = [*writers[writer], target]
    return Case("written paths", files, [Run(argv, "reject", checks)], f"{writer}: {kind}")


STRATEGIES: dict[str, Strategy] = {
    "mutations": mutations, "bks values": bks_values, "seeds": seed_values,
    "PDTSP layouts": pdtsp_layouts, "malformed solutions": malformed_solutions,
    "solution ids": knapsack_ids, "unused fields": unused_fields,
    "fleet and TYPE": fleet_and_type, "JSON strictness": json_strictness,
    "blank-line padding": blank_padding, "output paths": output_paths,
    "torn results": torn_results, "concurrent bench": concurrent_bench,
    "edited checkpoints": edited_checkpoints, "GEO files": geo_files,
    "crafted checkpoints": crafted_checkpoints, "option ranges": option_ranges,
    "huge sizes": huge_sizes, "written paths": written_paths,
}
