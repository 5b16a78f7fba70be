"""Sequentiality's tables: sentence and story sequentiality, their summaries and contrasts, and the
covariate regressions (nats per token)."""

from __future__ import annotations

from storyflow.tables.base import Table
from storyflow.tables.lm import CELL_COLUMNS, TERM_COLUMNS
from storyflow.tables.shared import GROUP_SUMMARY

SENTENCE_SEQUENTIALITY = Table(
    "sentence sequentiality",
    {
        **TERM_COLUMNS,
        "n_history": "int64",
        "truncated": "bool",
        "nll_base": "float64",
        "nll_context": "float64",
        "seq": "float64",
    },
    key=("story_id", "sentence_idx", "model", "formulation", "history"),
    doc="seq = nll_base − nll_context (nats/token): nll_base is the h = 0 term (NLL_T or "
    "NLL_∅), nll_context the term with history h.",
)

STORY_SEQUENTIALITY = Table(
    "story sequentiality",
    {
        "story_id": "object",
        "story_type": "object",
        **CELL_COLUMNS,
        "n_sentences": "int64",
        "seq": "float64",
        "nll_base": "float64",
        "nll_context": "float64",
        "any_truncated": "bool",
    },
    key=("story_id", "model", "formulation", "history"),
    doc="Story means over its sentences (nats/token); the first sentence counts with seq = 0.",
)

SUMMARY = Table(
    "sequentiality summary",
    {
        **CELL_COLUMNS,
        **GROUP_SUMMARY,
    },
    doc="Mean, SD and t-based CI of story-level measures per story type (nats/token).",
)

EFFECTS = Table(
    "effect sizes",
    {
        **CELL_COLUMNS,
        "contrast": "object",
        "group_a": "object",
        "group_b": "object",
        "measure": "object",
        "n_a": "int64",
        "n_b": "int64",
        "n_docs_a": "int64",
        "n_docs_b": "int64",
        "mean_a": "float64",
        "mean_b": "float64",
        "sd_a": "float64",
        "sd_b": "float64",
        "t": "float64",
        "df": "float64",
        "p": "float64",
        "g": "float64",
        "g_ci_low": "float64",
        "g_ci_high": "float64",
        "tested": "bool",
    },
    doc="Welch's t and Hedges' g (with CI) of group a minus group b per contrast and measure. "
    "tested: both groups have at least stats.min_group_size stories; when not, t, df, p and g "
    "are NaN (the sizes and means stay).",
)


COEFFICIENTS = Table(
    "regression coefficients",
    {
        "spec": "object",
        "kind": "object",
        "history": "object",
        "formulation": "object",
        "term": "object",
        "covariate": "object",
        "label": "object",
        "role": "object",
        "scaling": "object",
        "predictor_sd": "float64",
        "estimate": "float64",
        "se": "float64",
        "df": "float64",
        "t": "float64",
        "p": "float64",
        "p_fdr": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
        "significant_fdr": "bool",
        "n_obs": "int64",
        "n_stories": "int64",
    },
    doc="Fixed effects of each mixed-effects specification: estimate in nats/token per SD of a "
    "z-scored predictor or per unit of a 0/1 indicator, Satterthwaite df, BH-adjusted p.",
)

DIAGNOSTICS = Table(
    "regression diagnostics",
    {
        "spec": "object",
        "kind": "object",
        "history": "object",
        "formulation": "object",
        "status": "object",
        "formula": "object",
        "n_obs": "Int64",
        "n_stories": "Int64",
        "n_models": "Int64",
        "n_rows_scored": "Int64",
        "n_first_sentences_dropped": "Int64",
        "n_missing_dropped": "Int64",
        "n_truncated_kept": "Int64",
        "dropped_predictors": "object",
        "singular": "object",
        "converged": "object",
        "convergence_messages": "object",
        "warnings": "object",
        "messages": "object",
        "loglik": "float64",
        "aic": "float64",
        "sd_story": "float64",
        "sd_residual": "float64",
        "r_version": "object",
        "lme4_version": "object",
        "lmerTest_version": "object",
    },
    doc="One row per specification, fitted or skipped: the data used, what was dropped and why, "
    "and everything R reported.",
)
