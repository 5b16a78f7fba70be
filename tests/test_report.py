"""The Snakemake report of a finished run (issue 6): one self-contained HTML file with every figure
and table of the workflow and its caption.

Captions live in workflow/report/<name>.rst and start with a **bold title**, the key phrase this
test looks for in the report; every caption there must be used by a rule's ``report()`` output.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Snakemake

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
REPORT_DIR = REPO / "workflow" / "report"
RULE_FILES = sorted((REPO / "workflow" / "rules").glob("*.smk"))
GLOBAL_DESCRIPTION = "workflow.rst"
# report(...) outputs of the tiny run: file name -> caption file
REPORT_ITEM = re.compile(r'report\(\s*"([^"]+)",\s*caption="\.\./report/([^"]+\.rst)"')


def report_items() -> dict[str, str]:
    """Output path pattern (wildcards as ``*``) -> caption file, of every report() output."""
    items = {}
    for rules in RULE_FILES:
        for path, caption in REPORT_ITEM.findall(rules.read_text()):
            items[re.sub(r"\{+\w+\}+", "*", path)] = caption
    return items


def key_phrase(caption: Path) -> str:
    title = re.search(r"\*\*(.+?)\*\*", caption.read_text(), re.DOTALL)
    assert title, f"{caption} does not start with a **bold title** (its key phrase)"
    return " ".join(title.group(1).split())


def normalized(text: str) -> str:
    return " ".join(html.unescape(text.replace("\\n", " ")).split())


def test_every_caption_belongs_to_a_report_output() -> None:
    captions = {p.name for p in REPORT_DIR.glob("*.rst")} - {GLOBAL_DESCRIPTION}
    used = set(report_items().values())
    assert used <= captions, f"captions missing in workflow/report: {sorted(used - captions)}"
    assert captions <= used, f"captions no rule uses: {sorted(captions - used)}"


def test_report_holds_every_figure_and_table_with_its_caption(
    snakemake: Snakemake, tiny_run: Path, tmp_path: Path
) -> None:
    report = tmp_path / "report.html"
    snakemake(tiny_run, "--report", str(report))
    text = report.read_text(encoding="utf-8")
    # self-contained: no script or stylesheet fetched from elsewhere
    assert not re.search(r"<script[^>]*\ssrc=\"https?:", text)
    assert not re.search(r"<link[^>]*\shref=\"https?:", text)
    page = normalized(text)
    items = report_items()
    names = {Path(pattern).name for pattern in items}
    assert {"sample_counts.csv", "effect_sizes.csv", "effect_sizes.png"} <= names
    for pattern, caption in items.items():
        produced = list(tiny_run.glob(pattern))
        if not produced:  # an output of a stage the tiny config switches off (books, ...)
            continue
        name = Path(pattern).name
        assert name in page, f"{name} is not in the report"
        phrase = key_phrase(REPORT_DIR / caption)
        assert phrase in page, f"caption {caption} ({phrase!r}) is not in the report"
