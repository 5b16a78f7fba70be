"""The report's text renders without a reStructuredText warning: its first page (what
replicated, which models passed their checks, the measures) with realistic summaries and with
nothing to show yet, every caption, and each paper's replication page.

Snakemake renders each caption and the first page with Jinja2 and then docutils; a docutils
warning reaches the reader as a "System Message" box in the middle of the page. Here docutils
stops at the first warning (``halt_level`` 2), so any such message fails the test.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import jinja2
import numpy as np
import pandas as pd
import pytest
from conftest import validity_check
from docutils.core import publish_string

from storyflow import validity
from storyflow.replication import judging, page, papers, published, summary
from storyflow.replication.judging import Ours

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


def validity_summary() -> dict[str, list[str]]:
    """The validity table in words (the first page's ``brief``, the Validity caption's
    ``checks``) of a run where a judge, a detector and a reader fail."""
    smol = "smollm2-135m-instruct"
    rows = [
        validity_check(measure="tension", role="judge", model=smol,
                       name=f"balanced_accuracy[{smol}]", value=0.55, ci=(0.48, 0.61),
                       threshold=0.6),
        validity_check(measure="tension", role="forecaster", model=smol, name="pairwise_accuracy",
                       value=0.62, ci=(0.53, 0.72), threshold=0.5, rule=validity.RULES[1], n=64),
        validity_check(measure="plot_holes", corpus=validity.EVERY_CORPUS, role="detector",
                       model=smol, name="auroc", value=0.51, ci=(0.40, 0.62), threshold=0.5,
                       rule=validity.RULES[1], n=50),
        validity_check(measure="fabula_entropy", corpus="hippocorpus", role="reader",
                       model="qwen2.5-coder-1.5b-instruct/standard", name="balanced_accuracy",
                       value=0.64, ci=(0.55, 0.73), threshold=0.7, n=54),
        validity_check(measure="sequentiality", corpus="books", role="contrast",
                       model="fiction vs biography", name="min_group_size", value=2, threshold=5,
                       n=6),
    ]  # fmt: skip
    table = validity.frame(rows)
    return {"brief": validity.brief(table), "checks": validity.describe(table)}


def replication_tables() -> dict[str, pd.DataFrame]:
    """Every paper's replication table with an answer of ours to each published figure (values,
    intervals, models, a failed verdict); the inconclusive rows priced as the largest default
    run would price them (thousands of stories, millions of tokens), so the first page's
    sentences on deciding them are as long as they get."""
    tables = {}
    for paper in papers.PAPERS:
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
        table = judging.table(paper, figures, ours, judging.Rule(0.2, 0.05))
        open_ = table["verdict"].eq(judging.INCONCLUSIVE)
        sized = open_ & (np.arange(len(table)) % 2 == 0)
        tables[paper] = table.assign(
            n_to_decide=np.where(sized, 1234.0 + 977.0 * np.arange(len(table)), np.nan),
            decide_tokens=np.where(sized, 1.23e8, np.nan),
            decide_hours_cpu=np.where(sized, 171.0, np.nan),
            decide_hours_gpu=np.where(sized, 2.7, np.nan),
        )
    return tables


def replication_summary() -> list[dict[str, object]]:
    """:func:`replication_tables` as the first page says them."""
    return summary.summary(replication_tables(), papers.titles(), RATES)


#: Tokens per second here and on one GPU (replication.rates' defaults).
RATES = {"cpu": 200.0, "gpu": 12595.0}


def config_of(default_config: dict) -> dict:
    config = dict(default_config)
    config["_validity_summary"] = validity_summary()
    config["_replication_summary"] = replication_summary()
    config["_report_has"] = {"replication": True, "comparison": True}
    return config


#: Text the report must never show (issue 51): a word glued to "(category", "(none)" after a
#: number, a check "valid on all" (the corpus of the plot-hole checks, which hold for every
#: corpus).
BAD_TEXT = re.compile(r"\S\(category|\d\s*\(none\)|valid on all\b")


def first_page(config: dict) -> str:
    """The first page of ``config`` as HTML, any docutils warning an error."""
    text = render((REPORT / "workflow.rst").read_text(), SimpleNamespace(config=config))
    return strict_html(text)


def test_the_first_page_renders_without_a_warning_and_in_words(default_config) -> None:
    config = config_of(default_config)
    html = first_page(config)
    assert "System Message" not in html and not BAD_TEXT.search(html)
    assert "What replicated" in html and "Which models passed their checks" in html
    # one table of tallies, a row per paper: the rows of each paper are on its page
    assert html.count("<table") == 1
    for paper in config["_replication_summary"]:
        counts = paper["counts"]
        cells = re.search(re.escape(str(paper["title"])) + r"</td>(.*?)</tr>", html, re.S)
        assert cells, paper["title"]
        numbers = re.findall(r"<td>([^<]*)</td>", cells.group(1))
        shown = ("findings", "agrees", "disagrees", "inconclusive")
        assert numbers == [f"{counts['computed']} of {counts['figures']}",
                           *(str(counts[k]) for k in shown)]  # fmt: skip
        # what it would take to decide, a line per paper with inconclusive findings
        if paper["decide_brief"]:
            assert f"{paper['title']} {paper['decide_brief']}" in " ".join(html.split())
    assert "To decide" in html and "on one GPU" in html
    # which models passed, per measure and role, without the checks' ids
    assert "judge smollm2-135m-instruct failed; forecaster smollm2-135m-instruct valid" in html
    assert "balanced_accuracy" not in html and "Comparison of measures" in html


def test_the_first_page_says_so_when_there_is_nothing_to_show(default_config) -> None:
    """Before the first run there is no replication table and no validity table: each part of
    the page says so in a sentence (an empty list-table was a docutils error on the page)."""
    config = config_of(default_config)
    config["_replication_summary"] = []
    config["_validity_summary"] = {"brief": [], "checks": []}
    html = first_page(config)
    assert "System Message" not in html and not BAD_TEXT.search(html)
    assert "no replication table yet" in html and "no validity table yet" in html
    # a paper with nothing computed (FlawedFictions in the default run: 0 of 163) is a row of
    # zeros, not an empty table
    empty = summary.summary(
        {"flawed_fictions": replication_tables()["flawed_fictions"].iloc[:0]}, papers.titles()
    )
    html = first_page({**config, "_replication_summary": empty})
    assert "System Message" not in html and "<td>0 of 0</td>" in html


def test_a_study_of_ones_own_corpora_opens_on_its_answers(default_config) -> None:
    """With no paper and no comparison, the first page shows each contrast's headline in a
    table and speaks of no category the study lacks."""
    config = config_of(default_config)
    config["_report_has"] = {"replication": False, "comparison": False}
    config["_replication_summary"] = []
    config["_contrast_headlines"] = [
        {"corpus": "pairs", "contrast": "imagined vs recalled", "reads": "context, h 1-9, "
         "matched, smollm2", "estimate": "g_av 0.335 [-0.222, 0.916]",
         "answer": "inconclusive", "decide": "42"},
        {"corpus": "pairs", "contrast": "retold vs recalled", "reads": "context, h 1-9, "
         "unmatched, smollm2", "estimate": "g 0.9 [0.4, 1.4]",
         "answer": "a difference, group a higher", "decide": ""},
    ]  # fmt: skip
    html = first_page(config)
    assert "System Message" not in html and not BAD_TEXT.search(html)
    assert html.count("<table") == 1 and "g_av 0.335 [-0.222, 0.916]" in html
    assert "pairs: retold vs recalled" in html and "a difference, group a higher" in html
    for absent in ("What replicated", "no replication table yet", "Comparison of measures"):
        assert absent not in html


def test_the_validity_caption_says_every_check_in_words(default_config) -> None:
    config = config_of(default_config)
    snakemake = SimpleNamespace(config=config, wildcards=Anything(), params=Anything())
    html = strict_html(render((REPORT / "validity.rst").read_text(), snakemake))
    assert "System Message" not in html and not BAD_TEXT.search(html)
    assert "is below 0.6" in html  # the failed judge's check, in words
    assert "plot holes: 0 of 1 detector valid (failed:" in html  # its checks hold everywhere


def test_a_replication_page_shows_every_computed_figure_and_says_when_there_is_none() -> None:
    frames = replication_tables()
    frame = frames["fiction_flows"]
    text = page.render("fiction_flows", frame, title="Fiction Flows", confidence=0.95,
                       rates=RATES, figure=b"png")  # fmt: skip
    shown = summary.headline(summary.text_columns(frame))
    assert text.count("<tr>") == len(shown) + 1 > 20  # every row, not the first page's 20
    assert summary.tally(frame) in text and "To decide" not in text
    assert summary.undecided_sentence(summary.text_columns(frame), RATES) in text
    assert 'src="data:image/png;base64,cG5n"' in text
    about = page.render("fiction_flows", frame, title="Fiction Flows", confidence=0.95,
                        measure="Sequentiality (Sap et al. 2022) how much ...")  # fmt: skip
    assert "<p class='note'>The measure: Sequentiality (Sap et al. 2022) how much" in about
    none = page.render("flawed_fictions", frames["flawed_fictions"].iloc[:0], title="FF",
                       confidence=0.95)  # fmt: skip
    assert "No published figure of this paper was computed in this run" in none
    assert "<table" not in none


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


def test_what_deciding_would_take_is_one_line_per_paper_and_a_sentence_on_its_page() -> None:
    """The first page's line and the paper page's sentence read the same inconclusive findings:
    units per group (range), the largest's NLL hours here and on one GPU, those no larger sample
    decides."""
    frame = summary.text_columns(replication_tables()["flawed_fictions"])
    open_ = summary.findings(frame)
    open_ = open_[open_["verdict"] == judging.INCONCLUSIVE]
    sized = open_[open_["n_to_decide"].notna()]
    assert len(sized) and len(open_) > len(sized)  # both kinds, so both parts are said
    low, high = sized["n_to_decide"].min(), sized["n_to_decide"].max()
    found = summary.undecided(frame, RATES)
    assert found is not None
    assert found.brief() == (
        f"{len(sized)} of {len(open_)}, {low:,.0f} to {high:,.0f} stories (171 h, 2.7 h), "
        f"{len(open_) - len(sized)} by no larger sample"
    )
    assert found.sentence() == summary.undecided_sentence(frame, RATES)
    assert found.sentence() == (
        f"Deciding {len(sized)} of its {len(open_)} inconclusive findings takes {low:,.0f} to "
        f"{high:,.0f} stories per group at our estimates (median "
        f"{sized['n_to_decide'].median():,.0f}); the largest, "
        f"{sized.loc[sized['n_to_decide'].idxmax(), 'id']}, is 123.0 million NLL tokens: "
        f"171 h here, 2.7 h on one GPU; {len(open_) - len(sized)} that no larger sample of the "
        "same kind decides."
    )
    assert summary.undecided(frame[frame["verdict"] != judging.INCONCLUSIVE], RATES) is None
