"""storyflow.validity: the shared statistics of the validity checks, the verdicts and the
report's sentences (docs/validity.md)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import validity_check

from storyflow import bootstrap, tables, validity
from storyflow.errors import StoryflowError
from storyflow.measures.sequentiality.validity import contrast_checks


def row(corpus: str, model: str, name: str, value: float, threshold: float, role="reader"):
    return validity_check(
        corpus=corpus, model=model, name=name, value=value, threshold=threshold, role=role
    )


def test_a_yes_sayer_ranks_nothing_and_balances_to_chance() -> None:
    truth = np.array([1, 1, 1, 0, 0, 0])
    assert validity.balanced_accuracy(np.ones(6, bool), truth) == 0.5
    assert validity.roc_auc(np.full(6, 0.9), truth) == 0.5  # ties count half
    assert validity.roc_auc([0.9, 0.8, 0.7, 0.3, 0.2, 0.1], truth) == 1.0
    assert validity.balanced_accuracy([1, 1, 0, 0, 0, 0], truth) == pytest.approx((2 / 3 + 1) / 2)
    assert math.isnan(validity.balanced_accuracy([1, 0], [1, 1]))


def test_intervals_of_a_share_stay_inside_its_range_at_four_stories() -> None:
    # The case: a t interval of 4 no-rates reached below 0 and above 1.
    rates = [0.0, 0.0, 0.25, 1.0]
    mean, low, high = bootstrap.Resampling(confidence=0.95, resamples=2000, seed=1).mean_ci(rates)
    assert mean == pytest.approx(0.3125)
    assert 0 <= low < mean < high <= 1
    low, high = validity.wilson_interval(4, 4, 0.95)
    assert 0.5 < low < high == pytest.approx(1.0)
    assert all(math.isnan(x) for x in validity.wilson_interval(0, 0, 0.95))


def test_decide_by_value_or_by_the_lower_bound() -> None:
    assert validity.decide(0.8, 0.4, 0.7, "value >= threshold")
    assert not validity.decide(0.8, 0.4, 0.5, "ci_low > threshold")
    assert not validity.decide(math.nan, math.nan, 0.0, "value >= threshold")
    with pytest.raises(ValueError):
        validity.decide(1, 1, 0, "mean > threshold")


def test_report_says_each_corpus_verdict_apart() -> None:
    # A reader that passes on ROCStories and fails on HIPPOCORPUS must not read "0 of 1 valid".
    table = validity.frame(
        [
            row("rocstories", "qwen/standard", "control_auc", 0.98, 0.8),
            row("rocstories", "qwen/standard", "balanced_accuracy", 0.75, 0.7),
            row("hippocorpus", "qwen/standard", "control_auc", 0.97, 0.8),
            row("hippocorpus", "qwen/standard", "balanced_accuracy", 0.64, 0.7),
            row("books", "qwen/standard", "control_auc", 0.90, 0.8),
            row("books", "qwen/standard", "balanced_accuracy", 0.59, 0.7),
        ]
    )
    (line,) = validity.describe(table)
    assert line == (
        "fabula entropy: 1 of 1 reader valid on rocstories (qwen/standard); "
        "0 of 1 on hippocorpus (failed: qwen/standard: its balanced accuracy on items with "
        "known answers, 0.64, is below 0.7); 0 of 1 on books (failed: qwen/standard: its "
        "balanced accuracy on items with known answers, 0.59, is below 0.7)"
    )


def test_report_counts_models_of_a_role() -> None:
    table = validity.frame(
        [
            row("rocstories", "a", "control_auc", 0.9, 0.8),
            row("rocstories", "b", "control_auc", 0.6, 0.8),
            row("rocstories", "c", "control_auc", 0.85, 0.8),
        ]
    )
    assert validity.describe(table) == [
        "fabula entropy: 2 of 3 readers valid on rocstories (a, c) (failed: b: its ROC AUC on "
        "the control questions, 0.60, is below 0.8)"
    ]
    assert validity.describe(validity.frame([])) == []


def test_a_failed_check_is_said_in_words_with_its_value_and_threshold() -> None:
    """The report names what a failed check measured, its value and what it missed, never the
    check's id: a judge's CI below chance, a count below its minimum, a statistic not computed."""
    judge = validity_check(measure="tension", role="judge", model="smol",
                           name="balanced_accuracy_vs_chance[smol]", value=0.55, ci=(0.48, 0.61),
                           threshold=0.5, rule=validity.RULES[1])  # fmt: skip
    pairs = validity_check(measure="plot_holes", corpus="validation", role="detector", model="smol",
                           name="pairs", value=8.0, threshold=50.0, n=8)  # fmt: skip
    lines = validity.describe(
        validity.frame([judge, pairs, row("rocstories", "r", "control_auc", math.nan, 0.8)])
    )
    assert lines == [
        "tension: 0 of 1 judge valid on rocstories (failed: smol: its balanced accuracy on items "
        "with known answers (on smol's forecasts), 0.55, is not above 0.5 beyond doubt (its "
        "interval starts at 0.48))",
        "plot holes: 0 of 1 detector valid on validation (failed: smol: the controlled pairs it "
        "was checked on, 8, is below 50)",
        "fabula entropy: 0 of 1 reader valid on rocstories (failed: r: its ROC AUC on the "
        "control questions could not be computed)",
    ]
    assert not any("_" in line.split("(failed:")[1] for line in lines)


def test_gather_refuses_a_check_written_twice() -> None:
    one = validity.frame([row("rocstories", "a", "control_auc", 0.9, 0.8)])
    assert len(validity.gather([one, validity.frame([])])) == 1
    with pytest.raises(StoryflowError, match=r"control_auc.*written twice"):
        validity.gather([one, one])


def test_contrast_checks_test_only_groups_of_the_minimum_size() -> None:
    effects = pd.DataFrame(
        {
            "contrast": ["fiction vs biography", "fiction vs biography", "imagined vs recalled"],
            "group_a": ["fiction", "fiction", "imagined"],
            "group_b": ["biography", "biography", "recalled"],
            "n_a": [4, 4, 9],
            "n_b": [2, 2, 9],
        }
    )
    checks = contrast_checks(effects, "books", 5)
    assert list(checks.columns) == list(tables.VALIDITY.columns)
    checks = checks.set_index("model")
    assert not checks.loc["fiction vs biography", "passed"]
    assert checks.loc["fiction vs biography", "value"] == 2
    assert checks.loc["imagined vs recalled", "passed"]
    assert checks.loc["imagined vs recalled", "n"] == 18


def test_summary_of_a_missing_table_is_empty(tmp_path) -> None:
    assert validity.summary_of(str(tmp_path / "validity.csv")) == {"brief": [], "checks": []}
    path = tmp_path / "validity.csv"
    validity.frame([row("rocstories", "a", "control_auc", 0.9, 0.8)]).to_csv(path, index=False)
    assert validity.summary_of(str(path)) == {
        "brief": ["fabula entropy: reader a valid"],
        "checks": ["fabula entropy: 1 of 1 reader valid on rocstories (a)"],
    }


def test_the_first_page_says_which_models_passed_each_role_in_a_line_per_measure() -> None:
    """The report's first page: a line per measure, each role's models together, a model's
    corpora named only where its verdicts differ; the plot-hole checks, which hold for every
    corpus (corpus "all"), said without one ("valid on all" read as a corpus named all)."""
    judge = validity_check(measure="tension", role="judge", model="embedding",
                           name="balanced_accuracy[smol]", value=0.55, threshold=0.6)  # fmt: skip
    other = validity_check(measure="tension", role="judge", model="qwen",
                           name="balanced_accuracy[smol]", value=0.75, threshold=0.6)  # fmt: skip
    forecaster = validity_check(measure="tension", role="forecaster", model="smol",
                                name="pairwise_accuracy", value=0.7, threshold=0.5)  # fmt: skip
    detector = validity_check(measure="plot_holes", corpus=validity.EVERY_CORPUS,
                              role="detector", model="smol", name="auroc", value=0.4,
                              threshold=0.5)  # fmt: skip
    table = validity.frame(
        [judge, other, forecaster, detector,
         row("rocstories", "q", "balanced_accuracy", 0.75, 0.7),
         row("hippocorpus", "q", "balanced_accuracy", 0.64, 0.7)]
    )  # fmt: skip
    assert validity.brief(table) == [
        "tension: judge embedding failed, qwen valid; forecaster smol valid",
        "plot holes: detector smol failed",
        "fabula entropy: reader q valid on rocstories, failed on hippocorpus",
    ]
    checks = validity.describe(table)
    assert any(line.startswith("plot holes: 0 of 1 detector valid (failed: smol: its AUROC")
               for line in checks)  # fmt: skip
    assert not any("on all" in line for line in checks)
