"""The Snakemake report of a finished run (issue 6): one self-contained HTML file with every figure
and table of the workflow and its caption.

Captions live in workflow/report/<name>.rst and start with a **bold title**, the key phrase this
test looks for in the report; every caption there must be used by a rule's ``report()`` output.
"""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
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
#: storyflow's additions to Snakemake's report style (``--report-stylesheet``; issue 54, item 8).
STYLESHEET = REPORT_DIR / "stylesheet.css"
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
    """The HTML report of the run of every measure and their comparison (written once), with
    storyflow's stylesheet as the README's command makes it."""
    path = tmp_path_factory.mktemp("report") / "report.html"
    snakemake(
        measures_run, "--report", str(path), "--report-stylesheet", str(STYLESHEET),
        configfiles=[MEASURES_CONFIG],
    )  # fmt: skip
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
    assert "every measure on the same stories" in normalized(dom)  # the first page's first line
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


# --- the first page in the report's frame, and every page's text (issue 51) -----------------

#: Measures the first page where the report draws it: the first and the last block of its text
#: against the window, the scroll of the frame that holds it, and which of its heading and the
#: cells of its tables' first column are hidden: outside the window, or under another element
#: (the element at their centre is neither they nor inside them: Snakemake's menu covered them,
#: issue 54). Run once React has drawn it.
FIRST_PAGE_PROBE = """<script>
setTimeout(() => {
  const page = document.querySelector('.prose');
  const blocks = [...page.querySelectorAll('p, li, table')];
  const first = blocks[0].getBoundingClientRect();
  const last = blocks[blocks.length - 1].getBoundingClientRect();
  const cells = [...page.querySelectorAll('tr > :first-child')];
  const hidden = [blocks[0], ...cells].filter(element => {
    const box = element.getBoundingClientRect();
    const x = box.left + box.width / 2, y = box.top + box.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return true;
    const there = document.elementFromPoint(x, y);
    return !(there && (there === element || element.contains(there)));
  }).map(element => element.textContent.trim().slice(0, 40));
  document.documentElement.dataset.firstPage = JSON.stringify({
    heading: blocks[0].textContent, top: first.top, bottom: last.bottom, height: innerHeight,
    scrolled: page.closest('.overflow-auto').scrollTop, cells: cells.length, hidden: hidden});
}, 3000);
</script>"""


def first_page_in_window(report_html: str, folder: Path, size: tuple[int, int]) -> dict:
    """Where the report at ``size`` (window width, height) draws its first page."""
    at = report_html.rindex("</body>")  # the last: scripts of the report hold the word too
    probed = folder / f"probed_{size[0]}x{size[1]}.html"
    probed.write_text(report_html[:at] + FIRST_PAGE_PROBE + report_html[at:], encoding="utf-8")
    dom = chromium("--dump-dom", f"--window-size={size[0]},{size[1]}", probed.as_uri()).stdout
    found = re.search(r'data-first-page="([^"]*)"', dom)
    assert found, "the report's first page did not render"
    return json.loads(html.unescape(found.group(1)))


def with_first_page(report_html: str, body: str) -> str:
    """The report with ``body`` (HTML) as its first page."""
    line = f"var workflow_desc = {json.dumps(body)};\n"
    return re.sub(r"var workflow_desc = .*?;\n", lambda _: line, report_html, count=1)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is absent (./install.sh --dev installs it)")
def test_the_first_page_opens_at_its_top_inside_the_window(
    report: Path, tmp_path: Path, default_config: dict
) -> None:
    """The report centres its first page in a frame as high as the window, which cannot scroll
    above its top: a page taller than the window lost its heading (issue 51: the first paragraph
    was 3,056 px above the window at 1400x900). The run's own page, and the page of a default
    run (five papers, three models, the longest lines of what deciding would take), must both
    fit, heading first, at 1400x900 and 1920x1080; and nothing may cover the heading or the cells
    of the tally table's first column (the papers): Snakemake's menu covered them at 1400x900
    until storyflow's stylesheet (issue 54, item 8)."""
    from docutils.core import publish_parts
    from test_report_page import config_of, render

    text = report.read_text(encoding="utf-8")
    config = config_of(default_config)
    rst = render((REPORT_DIR / GLOBAL_DESCRIPTION).read_text(), SimpleNamespace(config=config))
    default_page = publish_parts(rst, writer_name="html")["html_body"]
    for name, page in (("this run", text), ("a default run", with_first_page(text, default_page))):
        for size in ((1400, 900), (1920, 1080)):
            found = first_page_in_window(page, tmp_path, size)
            where = f"{name} at {size[0]}x{size[1]}: {found}"
            assert found["heading"].startswith("storyflow: how stories flow"), where
            assert found["scrolled"] == 0 and found["top"] >= 0, where
            assert found["bottom"] <= found["height"], where
            assert found["hidden"] == [], where
            assert name == "this run" or found["cells"] > 1, where  # the tally table is there


#: Text no page of the report may show: docutils' messages, a word glued to "(category",
#: "(none)" after a number, "valid on all" (issue 51).
BROKEN = re.compile(r"System Message|\S\(category|\d\s*\(none\)|valid on all\b")


def test_no_page_of_the_report_shows_a_docutils_message_or_broken_text(report: Path) -> None:
    """Every page of the report: the first page, every caption and every HTML result (the
    replication pages, the story explorers), decoded as the browser opens them."""
    text = report.read_text(encoding="utf-8")
    desc = json.loads(re.search(r"var workflow_desc = (.*?);\n", text).group(1))
    results = json.loads(re.search(r"var results = (\{.*?\});\n", text, re.DOTALL).group(1))
    pages = {"first page": desc}
    for path, result in results.items():
        pages[f"caption of {path}"] = result["caption"] or ""
        if result["mime_type"] == "text/html":
            data = result["data_uri"].split(",", 1)[1]
            pages[path] = base64.b64decode(data).decode("utf-8")
    replication = [p for p in pages if re.search(r"results/replication/\w+\.html$", p)]
    assert replication, "no replication page in the report"
    for name, page in pages.items():
        found = BROKEN.search(normalized(html.unescape(re.sub(r"<[^>]+>", " ", page))))
        assert not found, f"{name}: {found.group(0)!r}"
