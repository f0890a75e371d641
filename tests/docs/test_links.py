"""Every link in README.md and docs/ resolves, and every repository file a page names exists
(result files, scripts, checkpoints, cards: a number's source must be there to look at)."""

from __future__ import annotations

import itertools
import re

import pytest

from routecli.cli.docgen import anchor
from tests.docs.markdown import PAGES, ROOT, headings, links

PATH = re.compile(r"(?<![\w/.~-])((?:benchmarks|routecli|tests|data|docs|\.ci)/(?:[\w.*+-]|/|\{[\w.,-]*\})*)")


def expanded(pattern: str) -> list[str]:
    """Shell brace expansion of ``a{b,c}d`` (no nesting)."""
    parts = re.split(r"\{([^}]*)\}", pattern)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(combo) for combo in itertools.product(*choices)]


def named_paths(text: str) -> set[str]:
    return {match.rstrip(".") for match in PATH.findall(text)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_resolves(page):
    for line, target in links(page):
        if re.match(r"[a-z]+:", target):
            assert target.startswith(("http://", "https://")), f"{page.name}:{line}: {target}"
            continue
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page.name}:{line}: {target} does not exist"
        if fragment and file.suffix == ".md":
            known = {anchor(h) for h in headings(file)}
            assert fragment in known, f"{page.name}:{line}: no heading #{fragment} in {file.name}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_repository_path_a_page_names_exists(page):
    missing = [name for name in sorted(named_paths(page.read_text()))
               if not any(any(ROOT.glob(p.rstrip("/"))) for p in expanded(name))]
    assert not missing, f"{page.name} names files that are not in the repository: {missing}"


def test_the_path_finder_sees_braces_globs_and_sentence_ends():
    text = ("see `benchmarks/results/miloop_throughput_avx2{,_bf16}.md` and "
            "routecli/checkpoints/nds-*.md. Not src/routecli/x.py or ~/routecli/y.")
    assert named_paths(text) == {"benchmarks/results/miloop_throughput_avx2{,_bf16}.md",
                                 "routecli/checkpoints/nds-*.md"}
    assert expanded("a{,_b}.md") == ["a.md", "a_b.md"]


def test_docs_exist_for_every_topic():
    names = {page.name for page in PAGES}
    assert {"README.md", "cli.md", "formats.md", "benchmarks.md", "pe-paper.md", "miloop.md",
            "nds.md", "training.md", "design.md", "development.md"} <= names
