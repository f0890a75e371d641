"""The accepted values and defaults that ``--help`` lists, for options whose source of truth
lives in a module that loads torch, scipy or numba.

Typer builds every command's help when the program starts, so taking these lists from their
home modules would make ``routecli --help`` import torch (seconds). They are copied here
instead; ``tests/cli/test_choices.py`` checks every copy against its source. Typed options
(decoding, removal policy, precision, loss, ...) are not copied: their ``Literal`` types live
in torch-free ``options`` modules beside the models, which the commands import.
"""

from __future__ import annotations

# routecli.io.ROUND_CHOICES
ROUND = ("file", "none", "euc2d", "ceil2d", "att", "geo", "exact")
# routecli.generate.GENERATORS
GENERATE_PROBLEMS = ("tsp", "cvrp", "vrptw", "pcvrp", "pdtsp", "kp")
# routecli.generate.KP_CAPACITIES
KP_CAPACITIES = (10, 25, 50, 100)
# routecli.bench.sets.NAMED_SETS
BENCH_SETS = ("tsplib", "cvrplib-x", "cvrplib-ags")
# routecli.bench.protocol.PROTOCOLS
BENCH_PROTOCOLS = ("pyvrp",)
# routecli.analysis.data.PROBLEMS: the problems of a generated set <problem>-<size>
SET_PROBLEMS = ("cvrp", "vrptw", "pdtsp")
# routecli.analysis.anisometry.PAPER_TABLE1
TABLE1_SETS = ("cvrp-100", "cvrp-200", "cvrp-500", "vrptw-100", "pdtsp-51")
# routecli.analysis.entropy.DEFAULT_SETS, DEFAULT_BINS, DEFAULT_MIN_COUNT
ENTROPY_SETS = ("cvrp-100", "cvrp-200", "cvrp-500", "vrptw-100")
ENTROPY_BINS = 16
ENTROPY_MIN_COUNT = 100
# routecli.pe.PE_REGISTRY
PE_NAMES = ("nope", "ape", "sin", "rope", "rpe", "alibi", "lap", "rwse", "spd", "dact",
            "cycleformer", "ipe", "ipe_inv", "xpe", "ipe_xpe", "ipe_inv_xpe", "ipe_index",
            "ipe_inv_index", "xpe_mean", "xpe_circular", "xpe_demand", "xpe_median",
            "xpe_midpoint")
# routecli.analysis.pe_plots.PLOTS
PE_PLOTS = ("heatmap", "similarity", "channels", "angles", "pca")
# routecli.pe.routing.SCHEDULES, AMPLITUDES
IPE_SCHEDULES = ("integer", "geometric")
IPE_AMPLITUDES = ("harmonic", "flat")
# routecli.generate.DISTRIBUTIONS
DISTRIBUTIONS = ("uniform", "clustered", "mixed", "explosion")
# routecli.analysis.shift.SHIFTS
SHIFTS = ("uniform", "low-capacity", "clustered", "mixed", "explosion")
# routecli.experiments.pe.compare.TABLE4: compare-pe's default encodings (summary.md)
COMPARE_PE_DEFAULT = "table4"
