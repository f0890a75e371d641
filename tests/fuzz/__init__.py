"""Fuzzing the input side of the CLI: mutated benchmark files (:mod:`.mutations`), cases for
options, solution files and layouts (:mod:`.strategies`), and the worker that runs them and
counts outcomes (:mod:`.harness`). ``benchmarks/fuzz_inputs.py`` is the command line."""
