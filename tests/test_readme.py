"""The README's facts that drift (issue 49, item 7): its layout names every page of docs/, and it
states no count of the library's modules or of the default run's jobs (both grow with the code;
a dated measurement of the run's time stays, and the earlier defaults' timings are in
CHANGELOG.md)."""

from __future__ import annotations

import re

from conftest import REPO

README = (REPO / "README.md").read_text()


def layout() -> str:
    """The README's Layout section: its code block."""
    section = README[README.index("## Layout\n") :]
    return section[section.index("```\n") + 4 : section.index("\n```", section.index("```\n") + 4)]


def test_the_layout_names_every_doc_and_the_changelog() -> None:
    block = layout()
    docs = block[block.index("\ndocs/") :]
    named = set(re.findall(r"\b([a-z_]+\.md)\b", docs))
    pages = {p.name for p in (REPO / "docs").glob("*.md")}
    assert pages - named == set(), f"docs/ pages the README's layout does not name: {pages - named}"
    assert named - {"CHANGELOG.md"} <= pages, named - pages
    assert re.search(r"^CHANGELOG\.md\s", block, re.M)
    for top in ("workflow/Snakefile", "config/", "envs/", "pyproject.toml", "CITATION.cff"):
        assert re.search(rf"^{re.escape(top)}", block, re.M) or f" {top}" in block, top


def test_no_count_of_modules_or_jobs() -> None:
    counts = re.findall(r"\b\d[\d,]*\s+(?:modules|jobs)\b", README)
    assert not counts, f"the README counts modules or jobs, which drift: {counts}"
