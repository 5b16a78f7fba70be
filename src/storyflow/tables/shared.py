"""The tables every measure writes: its validity checks and its story measures (what the comparison
reads); and the column groups that mean the same in several measures' tables."""

from __future__ import annotations

from storyflow.tables.base import Table

#: A story-level measure summarised over the stories of one story type: n stories with a value,
#: their mean and SD, and the mean's confidence interval (in the measure's unit).
GROUP_SUMMARY = {
    "story_type": "object",
    "measure": "object",
    "n": "int64",
    "mean": "float64",
    "sd": "float64",
    "ci_low": "float64",
    "ci_high": "float64",
}

#: A result's validity labels: valid, whether every model it rests on passed its validity
#: checks; failed, what did not ('' when valid; each table's doc says in which words).
VALIDITY_LABELS = {"valid": "bool", "failed": "object"}

VALIDITY = Table(
    "validity",
    {
        "measure": "object",
        "corpus": "object",
        "role": "object",
        "model": "object",
        "check": "object",
        "value": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
        "threshold": "float64",
        "rule": "object",
        "n": "int64",
        "passed": "bool",
        "detail": "object",
    },
    key=("measure", "corpus", "role", "model", "check"),
    doc="One validity check per row: can this model do this role, judged on items with known "
    "answers before the results that rest on it (docs/validity.md). measure: tension, "
    "fabula_entropy, plot_holes, sequentiality; corpus: the corpus the items come from "
    "(rocstories for the tension calibration); role: forecaster, judge, reader, detector, "
    "contrast; model: the model (a reader: model/variant; a contrast: its name); check: what is "
    "measured (e.g. control_auc, balanced_accuracy, pairwise_accuracy, auroc, "
    "ceeval_minus_always_no, min_group_size); value: the statistic (its unit in detail; shares "
    "and AUCs in 0-1); ci_low, ci_high: its confidence interval at stats.confidence "
    "(bootstrap percentile or Wilson: inside the statistic's range; NaN when not computed); "
    "threshold: the config's threshold (validity.*); rule: how value and threshold decide, "
    "'value >= threshold' or 'ci_low > threshold'; n: items the statistic rests on; passed: the "
    "verdict; detail: what the items were, in words.",
)

STORY_MEASURES = Table(
    "story measures",
    {
        "story_id": "object",
        "model": "object",
        "measure": "object",
        "value": "float64",
        "unit": "object",
    },
    key=("story_id", "model", "measure"),
    doc="One story-level score per row, the form in which every measure hands its results to the "
    "cross-measure comparison (results/<corpus>/<measure>/story_measures.parquet). model: the "
    "model the score depends on ('' when it depends on none); measure: the score's name, prefixed "
    "by its measure (e.g. tension.no_rate.embedding); value: the score (NaN where it is undefined "
    "for the story, the reason in the measure's log); unit: the value's unit (e.g. 'nats/token', "
    "'bits', 'share of endings (0-1)'). Every story of the measure's stories table has its rows.",
)
