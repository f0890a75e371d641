"""routecli: neural vehicle routing from the command line.

The public path of a solve is ``io.read -> Instance -> Solver.solve -> Solution ->
problems.validate / cost -> report``; see :mod:`routecli.solvers` for the solver registry.
"""

__version__ = "0.1.0"
