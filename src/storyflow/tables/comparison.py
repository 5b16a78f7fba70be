"""The comparison's tables: the story table, the measures' units and verdicts, correlations, the
models' agreement and the measures' separation of groups."""

from __future__ import annotations

from storyflow.tables.base import Table
from storyflow.tables.shared import VALIDITY_LABELS

STORY_TABLE = Table(
    "story table",
    {
        "story_id": "object",
        "model": "object",
        "story_type": "object",
        "n_sentences": "int64",
        "n_words": "int64",
        "failed_measures": "object",
    },
    key=("story_id", "model"),
    extra=True,
    doc="results/<corpus>/comparison/measures.parquet (and its CSV, tables/measures.csv): one "
    "row per story and model ('' when no score depends on a model); the corpus's label "
    "columns, n_sentences (spaCy sentences), n_words (whitespace-separated words), "
    "failed_measures (the row's measures that rest on a model that failed its validity check, "
    "space-separated; '' none: "
    "tables/measure_verdicts.csv says which checks), then one column per measure (units in "
    "tables/measure_units.csv). A score that depends on no model is repeated on each model's "
    "row.",
)

MEASURE_VERDICTS = Table(
    "measure verdicts",
    {"measure": "object", "model": "object", "verdict": "object", "failed": "object"},
    key=("measure", "model"),
    doc="Per story measure and model of a corpus ('' = none): verdict 'valid' (every model it "
    "rests on passed its validity check), 'failed' (failed: the failed checks, as 'role model "
    "check') or 'not checked' (no check covers it: sequentiality, narrative sense, PMI, human "
    "readers); from results/validity.csv (docs/validity.md).",
)

MEASURE_UNITS = Table(
    "measure units",
    {
        "measure": "object",
        "unit": "object",
        "models": "object",
        "n_stories": "int64",
        "n_missing": "int64",
    },
    key=("measure",),
    doc="Per measure of a story table: its unit, the models it was computed with (space-"
    "separated; '' = none), the stories it scored and how many of its values are NaN.",
)

_CORRELATION = {
    "n": "int64",
    "rho": "float64",
    "rho_low": "float64",
    "rho_high": "float64",
}

MEASURE_CORRELATIONS = Table(
    "measure correlations",
    {
        "model": "object",
        "measure_a": "object",
        "measure_b": "object",
        **_CORRELATION,
        "partial": "float64",
        "partial_low": "float64",
        "partial_high": "float64",
        **VALIDITY_LABELS,
    },
    key=("model", "measure_a", "measure_b"),
    doc="Spearman's rho of two story-level measures over the n stories with both (pairwise "
    "complete), its percentile-bootstrap CI, and the partial rho given story length with its "
    "CI (NaN on the diagonal and for length itself). Both orders of every pair. valid: neither "
    "measure rests on a model that failed its validity check; failed: those that do "
    "('measure@model', space-separated).",
)

MODEL_AGREEMENT = Table(
    "model agreement",
    {
        "measure": "object",
        "model_a": "object",
        "model_b": "object",
        **_CORRELATION,
        **VALIDITY_LABELS,
    },
    key=("measure", "model_a", "model_b"),
    doc="Spearman's rho between two models' story scores of one measure, bootstrap CI, n; "
    "valid: neither model failed its validity check for the measure (failed: those that did, "
    "'measure@model').",
)

MEASURE_SEPARATION = Table(
    "measure separation",
    {
        "contrast": "object",
        "group_a": "object",
        "group_b": "object",
        "model": "object",
        "measure": "object",
        "n_a": "int64",
        "n_b": "int64",
        "mean_a": "float64",
        "mean_b": "float64",
        "g": "float64",
        "g_low": "float64",
        "g_high": "float64",
        "tested": "bool",
        **VALIDITY_LABELS,
    },
    key=("contrast", "model", "measure"),
    doc="Hedges' g (group a minus group b, unitless) with its CI, for every contrast, model and "
    "measure of a story table; means in the measure's unit. tested: both groups have at least "
    "stats.min_group_size scored stories (else g and its CI are NaN, sizes and means kept); "
    "valid: the measure does not rest on a model that failed its validity check (failed: "
    "'measure@model').",
)
