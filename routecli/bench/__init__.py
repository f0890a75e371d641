"""``routecli bench``: solve a benchmark set, validate every solution, write a per-instance CSV,
a markdown report with averages by size bucket (MiLoop Table 2 layout) and a gap-vs-size plot.

The CSV is appended one row per finished instance, so an interrupted run resumes where it
stopped when rerun with the same output folder.
"""

from routecli.bench.report import BUCKETS, bucket_of, summarise, write_report
from routecli.bench.runner import BenchRow, completed, read_rows, read_rows_for, run_bench
from routecli.bench.sets import NAMED_SETS, data_root, resolve

__all__ = ["BUCKETS", "NAMED_SETS", "BenchRow", "bucket_of", "completed", "data_root",
           "read_rows", "read_rows_for", "resolve", "run_bench", "summarise", "write_report"]
