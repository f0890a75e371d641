"""Results: every number routecli or a benchmark stores, in one schema, with its provenance.

- :mod:`routecli.results.provenance`: where a number comes from (:class:`Provenance`: the
  commit the process started from, the UTC date, the command line).
- :mod:`routecli.results.store`: :class:`ResultStore`, an append-only CSV of keyed rows, each
  appended under a file lock with its provenance, so a killed run resumes; :func:`read_csv`.
- :mod:`routecli.results.rows`: :class:`ResultRow`, the row of one solved instance, and
  :class:`ResultLog`, the store of such rows (``routecli bench`` and the solver benchmarks).
"""

from routecli.results.provenance import PROVENANCE, Provenance, command_line, git_commit
from routecli.results.rows import COLUMNS, ResultLog, ResultRow, portable_path
from routecli.results.store import ResultStore, ResultStoreError, read_csv

__all__ = ["COLUMNS", "PROVENANCE", "Provenance", "ResultLog", "ResultRow", "ResultStore",
           "ResultStoreError", "command_line", "git_commit", "portable_path", "read_csv"]
