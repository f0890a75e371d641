"""The PE paper's findings as the pages show them are the committed ``claims.md`` rows of
``routecli compare-pe``: docs/pe-paper.md shows every row verbatim, and each row of the README's
table has the difference and verdict of a committed row."""

from __future__ import annotations

from tests.docs.markdown import ROOT

CLAIMS = sorted((ROOT / "benchmarks" / "results" / "compare_pe").glob("*/claims.md"))
VERDICTS = ("holds", "reversed", "not separated", "pending")


def claim_rows(text: str) -> list[tuple[str, list[str]]]:
    """(line, cells) of every table row whose last cell is a verdict."""
    rows = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[-1] in VERDICTS:
            rows.append((line, cells))
    return rows


def test_docs_show_every_committed_claim_as_committed():
    assert CLAIMS
    page = (ROOT / "docs" / "pe-paper.md").read_text()
    for path in CLAIMS:
        rows = claim_rows(path.read_text())
        assert rows, path
        for line, _ in rows:
            assert line in page, f"{path.relative_to(ROOT)}: docs/pe-paper.md lacks\n{line}"


def test_the_readme_claims_are_committed_claims():
    committed = {(cells[4], cells[-1]) for path in CLAIMS
                 for _, cells in claim_rows(path.read_text())}
    shown = claim_rows((ROOT / "README.md").read_text())
    assert shown
    for line, cells in shown:
        assert (cells[-2], cells[-1]) in committed, f"README.md: no committed claim has\n{line}"
