"""The guides hold together: every relative link of the README and of docs/*.md names a file that
exists and, with a #fragment, a heading of that file; every guide opens with a paragraph saying what
it is for; and a guide records no dated run (a run's numbers come from a script: docs/RESULTS.md,
docs/TIMINGS.md, or a section a script writes). The lab notes under docs/notes/ are kept as they were
written and are not checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GUIDES = sorted((REPO / "docs").glob("*.md"))
PAGES = [REPO / "README.md", *GUIDES]


def _without_code(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    heads = re.findall(r"^#{1,6} (.+)$", _without_code(page.read_text()), flags=re.M)
    return {_anchor(h) for h in heads}


def _links(page: Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", _without_code(page.read_text()))
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in _links(page):
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
            broken.append(target)
    assert broken == [], f"{page.relative_to(REPO)}: links to nothing: {broken}"


@pytest.mark.parametrize("page", GUIDES, ids=lambda p: p.name)
def test_every_guide_opens_with_what_it_is_for(page):
    """A title, then a paragraph of prose (not a table, a list, code or a heading)."""
    lines = page.read_text().splitlines()
    assert lines[0].startswith("# "), f"{page.name}: no title on its first line"
    first = next(line for line in lines[1:] if line.strip())
    assert not re.match(r"\s*(#|\||```|- |\* |\d+\. |<!--)", first), f"{page.name} opens with {first!r}"


#: pages a script writes whole (scripts/results.py, benchmarks/timings.py, studies/operator/enforced_budgets.py)
GENERATED = {"RESULTS.md", "TIMINGS.md", "ENFORCED_BUDGETS.md"}
#: what a lab notebook says and a guide does not: a date, a numbered run or pass, a session
DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b(?:second|third|fourth|fifth) (?:run|pass)\b|\bsession \d+\b",
                   flags=re.I)


def _written_by_hand(page: Path) -> str:
    """The page without what a script writes into it: the blocks between a "<!-- measured: SCRIPT -->"
    marker and its "<!-- end" marker, and a section whose first paragraph begins "Written by `"."""
    text = re.sub(r"<!-- measured:.*?<!-- end[^>]*-->", "", page.read_text(), flags=re.S)
    sections = re.split(r"(?m)^(?=## )", text)
    return "".join(s for s in sections
                   if not re.match(r"## [^\n]*\n+Written by `", s))


@pytest.mark.parametrize("page", [p for p in GUIDES if p.name not in GENERATED], ids=lambda p: p.name)
def test_a_guide_records_no_dated_run(page):
    found = [m.group() for m in DATED.finditer(_written_by_hand(page))]
    assert found == [], f"{page.name} reads like a lab notebook ({found}): move the run to docs/notes/"
