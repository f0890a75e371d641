import pytest

from routecli.bench import BenchRow, bucket_of, summarise, write_report


def row(name, problem, n, gap, feasible=True):
    return BenchRow("abc123", "2026-12-02T00:00:00Z", "routecli bench", "x", name, f"x/{name}",
                    problem, n, "nn", "{}", 0, None, None, 100 + gap, 100.0, gap, 1.0, feasible,
                    "" if feasible else "customer 3 missing")


def test_buckets_follow_miloop_table_2():
    assert bucket_of("tsp", 1000) == "(0,1K]" and bucket_of("tsp", 1001) == "(1K,5K]"
    assert bucket_of("tsp", 85900) == "(5K,100K)"
    assert bucket_of("cvrp", 7000) == "(1K,7K]" and bucket_of("cvrp", 30000) == "(7K,30K]"
    with pytest.raises(ValueError):
        bucket_of("cvrp", 0)


def test_summary_averages_feasible_gaps_per_bucket_and_counts_solved():
    rows = [row("a", "cvrp", 100, 2.0), row("b", "cvrp", 500, 4.0), row("c", "cvrp", 3000, 9.0),
            row("d", "cvrp", 3000, 50.0, feasible=False)]
    small, mid, large, total = summarise(rows)["cvrp"]
    assert (small.mean_gap, small.count, small.solved) == (3.0, 2, 2)
    assert (mid.mean_gap, mid.count, mid.solved) == (9.0, 2, 1)
    assert large.count == 0 and large.mean_gap is None
    assert total.mean_gap == pytest.approx(5.0) and (total.solved, total.count) == (3, 4)


def test_report_has_table_comparison_command_and_plot(tmp_path):
    rows = [row("a", "tsp", 100, 2.0), row("b", "tsp", 2000, 6.0)]
    other = [row("a", "tsp", 100, 1.0), row("b", "tsp", 2000, 3.0)]
    path = write_report(rows, tmp_path, "t", other, "hgs", command="routecli bench --set x")
    text = path.read_text()
    assert "| nn | 2.00% | 6.00% | - | 4.00% | 2/2 |" in text
    assert "| hgs | 1.00% | 3.00% | - | 2.00% | 2/2 |" in text
    assert "routecli bench --set x" in text
    assert (tmp_path / "gap_vs_size.png").stat().st_size > 1000
