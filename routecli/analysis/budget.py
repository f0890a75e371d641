"""The PyVRP budget of the analyses' reference solutions, as a fraction of the gap-grade one
(kept apart from :mod:`routecli.analysis.data` so that the CLI can show it without importing
PyVRP)."""

# The analyses measure the shape of near-optimal routes on 1,000 instances per set, not their
# cost. The gap-grade reference budget (doubling it gains < 0.1% in cost) would take about 90
# CPU-hours for the five Table 1 sets on this machine. Measured on the first 16 instances of
# each set against a run on a quarter of the gap-grade budget (benchmarks/analysis_budget.py,
# results/analysis_budget.md): with these fractions no Table 1 mean moves by more than 0.015 in
# CV or MAD (CVRP-500; smaller budgets bias its CV down and MAD up by up to 0.05), which is
# within two standard errors of the paired change; PDTSP is cheap, so it gets more.
ANALYSIS_FACTORS = {"cvrp": 0.05, "vrptw": 0.05, "pdtsp": 0.25}


def describe_factors() -> str:
    """``"CVRP 0.02, VRPTW 0.05, PDTSP 0.25"``, for help texts."""
    return ", ".join(f"{problem.upper()} {factor:g}" for problem, factor in ANALYSIS_FACTORS.items())
