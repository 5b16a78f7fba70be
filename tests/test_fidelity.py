"""The fidelity tables of docs/ cite the papers and the code, and every reference resolves.

Each measure's page has one section headed ``## Fidelity to ...`` whose table has the columns
of :data:`COLUMNS` (docs/fidelity.md):

- ``paper``: where the paper says it, as `` `<file>.txt` `` with a line (``l. 120``), a line
  range (``l. 120-134``) or a section (``§4.2``) of the file under ``../shared/papers/``; or a
  dash, only when the row is not in the paper;
- ``code``: one or more `` `storyflow.module:name` `` (a function, class or constant) that
  does the step, each of which must import;
- ``paper.yaml``: starts with **same**, **deviates** or **not in the paper**;
- ``default``: starts with **as paper.yaml** or **deviates**.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAPERS = REPO.parent / "shared" / "papers"

#: Every measure page and the paper its fidelity table cites.
PAGES = {
    "sequentiality.md": "fiction_flows.txt",
    "regression.md": "fiction_flows.txt",
    "narrative_sense.md": "narrative_sense_pmi.txt",
    "tension.md": "hundred_endings_tension.txt",
    "fabula_entropy.md": "fabula_entropy_indexing.txt",
    "plot_holes.md": "flawed_fictions.txt",
}
COLUMNS = ("step", "paper", "code", "paper.yaml", "default")
VERDICTS = ("**same**", "**deviates**", "**not in the paper**")
DEFAULT_VERDICTS = ("**as paper.yaml**", "**deviates**")
CODE_REF = re.compile(r"`(storyflow(?:\.\w+)+):([\w.]+)`")
PAPER_REF = re.compile(r"`(\w+\.txt)`[^`|]*?(?:l\. (\d+)(?:-(\d+))?|§\s?([A-Z]?[\d.]+|[A-Z]\b))")


def fidelity_rows(page: Path) -> list[dict[str, str]]:
    """The rows of the page's ``## Fidelity`` table, as column -> cell."""
    text = page.read_text()
    match = re.search(r"^## Fidelity.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"{page.name}: no '## Fidelity ...' section"
    lines = [ln for ln in match.group(1).splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert tuple(header) == COLUMNS, f"{page.name}: fidelity columns {header}, want {COLUMNS}"
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        assert len(cells) == len(COLUMNS), f"{page.name}: row with {len(cells)} cells: {line}"
        rows.append(dict(zip(COLUMNS, cells, strict=True)))
    assert rows, f"{page.name}: the fidelity table has no rows"
    return rows


ROWS = [
    pytest.param(page, row, id=f"{page}:{row['step'][:40]}")
    for page in PAGES
    for row in fidelity_rows(REPO / "docs" / page)
]


@pytest.mark.parametrize(("page", "row"), ROWS)
def test_each_row_says_same_deviates_or_not_in_the_paper(page: str, row: dict) -> None:
    assert row["paper.yaml"].startswith(VERDICTS), (page, row["step"], row["paper.yaml"][:60])
    assert row["default"].startswith(DEFAULT_VERDICTS), (page, row["step"], row["default"][:60])


@pytest.mark.parametrize(("page", "row"), ROWS)
def test_each_row_cites_its_paper_by_line_or_section(page: str, row: dict) -> None:
    cites = PAPER_REF.findall(row["paper"])
    if row["paper.yaml"].startswith("**not in the paper**") and not cites:
        return
    assert cites, f"{page} '{row['step']}': no `<paper>.txt` l. N or § cite in {row['paper']!r}"
    for name, first, last, _section in cites:
        assert name == PAGES[page], f"{page} '{row['step']}' cites {name}, not {PAGES[page]}"
        if first and PAPERS.is_dir():
            n_lines = len((PAPERS / name).read_text().splitlines())
            end = int(last or first)
            assert 1 <= int(first) <= end <= n_lines, (
                f"{page} '{row['step']}': {name} l. {first}-{end} is outside its {n_lines} lines"
            )


@pytest.mark.parametrize(("page", "row"), ROWS)
def test_each_rows_code_reference_exists(page: str, row: dict) -> None:
    refs = CODE_REF.findall(row["code"])
    assert refs, f"{page} '{row['step']}': no `storyflow.module:name` in {row['code']!r}"
    for module, name in refs:
        obj = importlib.import_module(module)
        for part in name.split("."):
            assert hasattr(obj, part), f"{page} '{row['step']}': {module}:{name} does not exist"
            obj = getattr(obj, part)
