"""The report's text renders without a reStructuredText warning: its first page (what
replicated, which results to trust, the measures) with realistic summaries, and every caption.

Snakemake renders each caption and the first page with Jinja2 and then docutils; a docutils
warning reaches the reader as a "System Message" box in the middle of the page. Here docutils
stops at the first warning (``halt_level`` 2), so any such message fails the test.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
from conftest import validity_check
from docutils.core import publish_string

from storyflow import validity
from storyflow.plan import registry
from storyflow.replication import agreement, published, summary
from storyflow.replication.agreement import Ours

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "workflow" / "report"
#: What Snakemake appends to every caption before rendering it: link targets (its
#: ``rst_links``, here with no category and no file).
RST_LINKS = """

.. _Workflow: javascript:show_panel('workflow')
.. _Statistics: javascript:show_panel('statistics')
"""


def render(template: str, snakemake: object) -> str:
    """``template`` rendered as Snakemake's report renders it (its Jinja2 settings)."""
    environment = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    text = template + RST_LINKS
    return environment.from_string(text).render(snakemake=snakemake, categories={}, files={})


def strict_html(text: str) -> str:
    """The rST as HTML; any docutils warning raises (as it would show in the report)."""
    return publish_string(
        text,
        writer_name="html",
        settings_overrides={"halt_level": 2, "report_level": 2, "output_encoding": "unicode"},
    )


def validity_summary() -> list[str]:
    """The first page's validity lines of a run where a judge, a detector and a reader fail."""
    smol = "smollm2-135m-instruct"
    rows = [
        validity_check(measure="tension", role="judge", model=smol,
                       name=f"balanced_accuracy[{smol}]", value=0.55, ci=(0.48, 0.61),
                       threshold=0.6),
        validity_check(measure="tension", role="forecaster", model=smol, name="pairwise_accuracy",
                       value=0.62, ci=(0.53, 0.72), threshold=0.5, rule=validity.RULES[1], n=64),
        validity_check(measure="plot_holes", corpus="validation", role="detector", model=smol,
                       name="auroc", value=0.51, ci=(0.40, 0.62), threshold=0.5,
                       rule=validity.RULES[1], n=50),
        validity_check(measure="fabula_entropy", corpus="hippocorpus", role="reader",
                       model="qwen2.5-coder-1.5b-instruct/standard", name="balanced_accuracy",
                       value=0.64, ci=(0.55, 0.73), threshold=0.7, n=54),
        validity_check(measure="sequentiality", corpus="books", role="contrast",
                       model="fiction vs biography", name="min_group_size", value=2, threshold=5,
                       n=6),
    ]  # fmt: skip
    return validity.describe(validity.frame(rows))


def replication_summary() -> list[dict[str, object]]:
    """Every paper's published figures with an answer of ours each (values, intervals, models,
    a failed verdict), as the first page says them."""
    tables = {}
    for paper in published.PAPERS:
        figures = published.read(published.path_of(paper))
        ours = {}
        for i, row in enumerate(figures.to_dict("records")):
            value = float(row["value"]) if row["value"] == row["value"] else math.nan
            ours[row["id"]] = Ours(
                value * 0.9 if math.isfinite(value) else 0.2,
                (value * 0.5, value * 1.1) if math.isfinite(value) else (0.1, 0.3),
                str(row["direction"] or ""),
                "9 stories per type",
                "gemma3-270m, smollm2-135m-instruct",
                "failed: a reader failed its validity check" if i % 3 else "valid",
                "*a note* with `marks`",
                True,
            )
        tables[paper] = agreement.table(paper, figures, ours, agreement.Rule(0.2, 0.05))
    return summary.summary(tables, published.TITLES, 0.95)


def config_of(default_config: dict) -> dict:
    config = dict(default_config)
    config["_validity_summary"] = validity_summary()
    config["_replication_summary"] = replication_summary()
    config["_measures"] = [
        {"title": m.category, "doc": m.doc, "summary": m.summary, "enabled": m.enabled(config)}
        for m in registry.MEASURES
    ]
    return config


def test_the_first_page_renders_without_a_warning_and_in_words(default_config) -> None:
    config = config_of(default_config)
    text = render((REPORT / "workflow.rst").read_text(), SimpleNamespace(config=config))
    html = strict_html(text)
    assert "System Message" not in html
    assert "What replicated" in html and "Which results to trust" in html
    # one table per paper, each verdict in words, no row resting on no model
    assert html.count("<table") >= len(published.PAPERS) and "on nan" not in html
    assert "inconclusive: our interval," in html or "agrees: our interval," in html
    assert "is below 0.6" in html and "balanced_accuracy" not in html  # words, not check ids
    for measure in registry.MEASURES:
        assert measure.category in html


#: The params the captions compute with (an interval level, a count).
NUMBERS = {"confidence": 0.95, "min_sentences": 2, "fraction": None, "per_type": 9, "seed": 1}


class Anything(SimpleNamespace):
    """A stand-in for a job's wildcards or params: a number where a caption computes with it
    (:data:`NUMBERS`), any other attribute a plain word."""

    def __getattr__(self, name: str) -> object:
        return NUMBERS.get(name, name)


@pytest.mark.parametrize(
    "caption", sorted(p.name for p in REPORT.glob("*.rst") if p.name != "workflow.rst")
)
def test_every_caption_renders_without_a_warning(caption: str, default_config) -> None:
    snakemake = SimpleNamespace(
        config=default_config, wildcards=Anything(), params=Anything(), input=Anything()
    )
    html = strict_html(render((REPORT / caption).read_text(), snakemake))
    assert "System Message" not in html
