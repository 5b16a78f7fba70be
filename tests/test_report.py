"""The Snakemake report of a finished run (issue 6): one self-contained HTML file with every figure
and table of the workflow and its caption.

Captions live in workflow/report/<name>.rst and start with a **bold title**, the key phrase this
test looks for in the report; every caption there must be used by a rule's ``report()`` output.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from conftest import MEASURES_CONFIG

from storyflow import plan
from storyflow.plan import layout
from storyflow.plan.layout import fill

if TYPE_CHECKING:
    from conftest import Snakemake

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
REPORT_DIR = REPO / "workflow" / "report"
RULE_FILES = sorted((REPO / "workflow" / "rules").rglob("*.smk"))
GLOBAL_DESCRIPTION = "workflow.rst"
# report(...) outputs of every rule: the path (a layout call, as the rules write it) -> caption
REPORT_ITEM = re.compile(
    r"report\(\s*(?P<path>[^\n]+?),\s*caption=\"(?:\.\./)+report/(?P<caption>[^\"]+\.rst)\""
)
#: The names the rules build paths with (the planning modules; workflow/rules/common.smk).
LAYOUTS = {
    "plan": plan,
    "fill": fill,
    "VALIDITY_TABLE": layout.VALIDITY,
    "LM_COST_TABLE": layout.LM_COST,
}


def report_items() -> dict[str, str]:
    """Output path pattern (wildcards as ``*``) -> caption file, of every report() output."""
    items = {}
    for rules in RULE_FILES:
        for path, caption in REPORT_ITEM.findall(rules.read_text()):
            pattern = eval(path, {"__builtins__": {}}, LAYOUTS)  # a planned name of the rules
            items[re.sub(r"\{+\w+\}+", "*", pattern)] = caption
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


@pytest.fixture(scope="module")
def report(
    snakemake: Snakemake, measures_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The HTML report of the run of every measure and their comparison (written once)."""
    path = tmp_path_factory.mktemp("report") / "report.html"
    snakemake(measures_run, "--report", str(path), configfiles=[MEASURES_CONFIG])
    return path


def test_report_holds_every_figure_and_table_with_its_caption(
    report: Path, measures_run: Path
) -> None:
    text = report.read_text(encoding="utf-8")
    # self-contained: no script or stylesheet fetched from elsewhere
    assert not re.search(r"<script[^>]*\ssrc=\"https?:", text)
    assert not re.search(r"<link[^>]*\shref=\"https?:", text)
    page = normalized(text)
    items = report_items()
    names = {Path(pattern).name for pattern in items}
    assert {"sample_counts.csv", "effect_sizes.csv", "effect_sizes.png"} <= names
    for pattern, caption in items.items():
        produced = list(measures_run.glob(pattern))
        if not produced:  # an output of a stage the tiny config switches off (books, ...)
            continue
        for path in produced:  # file names may hold wildcards too (calibration/<model>.csv)
            assert path.name in page, f"{path.name} is not in the report"
        phrase = key_phrase(REPORT_DIR / caption)
        assert phrase in page, f"caption {caption} ({phrase!r}) is not in the report"


CHROMIUM = (
    shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
)


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium (no sandbox: CI runs as root), JavaScript given time to run."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    command += ["--virtual-time-budget=15000", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=True)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is absent (./install.sh --dev installs it)")
def test_report_renders_in_a_browser_with_every_figure(report: Path, tmp_path: Path) -> None:
    """The report's page is built by JavaScript: a real browser must show its first page (the
    comparison of measures first in the menu) and decode every embedded figure."""
    shot = tmp_path / "first_page.png"
    chromium(f"--screenshot={shot}", "--window-size=1400,1000", report.as_uri())
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert pixels.std() > 10, "the report's first page rendered blank"
    dom = chromium("--dump-dom", report.as_uri()).stdout
    assert "storyflow measures how stories" in normalized(dom)
    results_menu = re.search(r">Results</li>(.*?)</ul>", dom, re.DOTALL | re.IGNORECASE)
    assert results_menu, "the report's menu of result categories did not render"
    categories = re.findall(r"<span>([^<]+)</span>", results_menu.group(1))
    assert categories[0] == "Comparison of measures", f"menu: {categories}"

    # every figure of the report, decoded by the browser: its natural size must be known
    text = report.read_text(encoding="utf-8")
    results = json.loads(re.search(r"var results = (\{.*?\});\n", text, re.DOTALL).group(1))
    images = {k: v["data_uri"] for k, v in results.items() if v["mime_type"] == "image/png"}
    assert any("measure_correlations" in k for k in images), sorted(images)
    page = tmp_path / "figures.html"
    page.write_text(
        "<html><body>"
        + "".join(f'<img alt="{html.escape(k)}" src="{v}">' for k, v in images.items())
        + "<script>window.onload = () => { document.body.dataset.sizes = JSON.stringify("
        "[...document.images].map(i => [i.alt, i.naturalWidth, i.naturalHeight])); };"
        "</script></body></html>"
    )
    dom = chromium("--dump-dom", page.as_uri()).stdout
    sizes = json.loads(html.unescape(re.search(r'data-sizes="([^"]*)"', dom).group(1)))
    assert len(sizes) == len(images)
    broken = [name for name, width, height in sizes if not (width > 100 and height > 100)]
    assert not broken, f"figures the browser could not draw: {broken}"
