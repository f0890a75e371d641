import pytest

from routecli.bench import BenchRow, bucket_of, summarise, write_report
from routecli.bench.report import PLOT_SOFTWARE, REPORT_MARK, markdown
from routecli.plots.figure import png_made_by


def row(name, problem, n, gap, feasible=True, solver="nn", seconds=1.0):
    return BenchRow("abc123", "2026-12-02T00:00:00Z", "routecli bench", "x", name, f"x/{name}",
                    problem, n, solver, "{}", 0, None, None, 100 + gap, 100.0, gap, seconds,
                    feasible,
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
    other = [row("a", "tsp", 100, 1.0, solver="hgs"), row("b", "tsp", 2000, 3.0, solver="hgs")]
    path = write_report(rows, tmp_path, "t", other, command="routecli bench --set x")
    text = path.read_text()
    assert text.startswith(REPORT_MARK + "\n")
    assert png_made_by(tmp_path / "gap_vs_size.png") == PLOT_SOFTWARE
    assert "| nn | 2.00% | 6.00% | - | 4.00% | 2/2 |" in text
    assert "| hgs | 1.00% | 3.00% | - | 2.00% | 2/2 |" in text
    assert "routecli bench --set x" in text
    assert (tmp_path / "gap_vs_size.png").stat().st_size > 1000


def test_the_compared_run_is_named_by_its_solvers_not_its_folder():
    rows = [row("a", "tsp", 100, 2.0)]
    assert "| nn (other run) | 1.00% |" in markdown(rows, "t", [row("a", "tsp", 100, 1.0)])


def test_empty_buckets_show_no_time_and_the_mean_is_a_mean():
    rows = [row("a", "tsp", 100, 2.0, seconds=1.0), row("b", "tsp", 200, 2.0, seconds=3.0)]
    assert "| mean time (s) | 2.00 | - | - | 2.00 | |" in markdown(rows, "t")


@pytest.mark.parametrize("sizes", [[101, 103, 105], [100, 5000]])
def test_the_size_axis_is_labelled_in_plain_integers(sizes):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from routecli.bench.report import _size_axis

    fig, ax = plt.subplots()
    ax.scatter(sizes, [1.0] * len(sizes))
    _size_axis(ax, sizes)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() + ax.get_xticklabels(minor=True)
              if t.get_text()]
    plt.close(fig)
    assert labels and all(label.isdigit() for label in labels), labels
