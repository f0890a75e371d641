"""Results: every number routecli or a benchmark stores, in one schema, with its provenance.

- :mod:`routecli.results.provenance`: where a number comes from (:class:`Provenance`: the
  commit the process started from, the UTC date, the command line).
- :mod:`routecli.results.store`: :class:`ResultStore`, an append-only CSV of keyed rows, each
  appended under a file lock with its provenance, so a killed run resumes; :func:`read_csv`.
- :mod:`routecli.results.tables`: tables written whole, atomically (:func:`write_table`,
  :func:`write_rows` for analysis tables in CSV or JSON).
- :mod:`routecli.results.rows`: the record of one solved instance: :func:`solve_record` (the
  ``solve --json`` object, :func:`write_solve_csv`) and :class:`ResultRow` with
  :class:`ResultLog`, the store of such rows (``routecli bench`` and the solver benchmarks).
- :mod:`routecli.results.strict_json`: JSON that every strict parser reads (no NaN).
"""

from routecli.results import strict_json
from routecli.results.provenance import PROVENANCE, Provenance, command_line, git_commit
from routecli.results.rows import (
    COLUMNS,
    OBJECTIVES,
    SOLVE_FIELDS,
    ResultLog,
    ResultRow,
    portable_path,
    solve_record,
    write_solve_csv,
)
from routecli.results.store import ResultStore, ResultStoreError, read_csv
from routecli.results.tables import write_rows, write_table

__all__ = ["COLUMNS", "OBJECTIVES", "PROVENANCE", "SOLVE_FIELDS", "Provenance", "ResultLog",
           "ResultRow", "ResultStore", "ResultStoreError", "command_line", "git_commit",
           "portable_path", "read_csv", "solve_record", "strict_json", "write_rows",
           "write_solve_csv", "write_table"]
