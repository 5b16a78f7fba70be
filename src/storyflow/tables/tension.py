"""Tension's tables: cuts, endings, judgments, curves, story scores, the judge's calibration and
the group comparisons."""

from __future__ import annotations

from storyflow.tables.base import Table
from storyflow.tables.shared import GROUP_SUMMARY, VALIDITY_LABELS

#: A story of the corpus and the forecaster model that reads it.
_STORY = {"story_id": "object", "story_type": "object", "model": "object"}

_CUT = {
    **_STORY,
    "cut": "int64",
    "sentence_idx": "int64",
    "pct": "float64",
}

TENSION_CUTS = Table(
    "tension cuts",
    {
        **_CUT,
        "prefix_tokens": "int64",
        "story_tokens": "int64",
        "unit": "object",
        "prefix": "object",
        "remainder": "object",
    },
    key=("story_id", "model", "cut"),
    doc="One row per kept cut: after sentence sentence_idx (0-based), cut = 0, 1, ... in story "
    "order; pct = prefix_tokens / story_tokens, counted in unit: 'tokens' (the forecaster "
    "model's tokenizer) or 'words' (a served model without a tokenizer file); prefix = "
    "sentences 0..sentence_idx, remainder = the rest (the truth).",
)

TENSION_EXCLUDED = Table(
    "tension excluded stories",
    {
        **_STORY,
        "n_sentences": "int64",
        "reason": "object",
    },
    key=("story_id", "model"),
    doc="Stories the tension measure leaves out (empty, one sentence, too long, no kept cut).",
)

TENSION_ENDINGS = Table(
    "tension endings",
    {
        **_CUT,
        "sample": "int64",
        "seed": "int64",
        "text": "object",
        "n_tokens": "int64",
        "finish_reason": "object",
    },
    key=("story_id", "model", "cut", "sample"),
    doc="K sampled endings per cut: sample k is seeded by (seed, k); n_tokens = generated tokens; "
    "finish_reason eos, stop or length.",
)

TENSION_JUDGMENTS = Table(
    "tension judgments",
    {
        **_CUT,
        "sample": "int64",
        "judge": "object",
        "score": "float64",
        "mass": "float64",
        "match": "boolean",
        "status": "object",
    },
    key=("story_id", "model", "judge", "cut", "sample"),
    doc="One verdict per ending: score = cosine (embedding judge) or P(Y) (LLM judge); mass = "
    "P(Y) + P(N) (LLM judge); match missing when status is 'empty forecast' or 'empty answer "
    "set'.",
)

TENSION_CURVES = Table(
    "tension curves",
    {
        **_CUT,
        "judge": "object",
        "n_samples": "int64",
        "n_judged": "int64",
        "n_no": "int64",
        "n_unjudged": "int64",
        "no_rate": "float64",
        "no_rate_judged": "float64",
    },
    key=("story_id", "model", "judge", "cut"),
    doc="No-rate per cut (Sui et al. Eq. 4): no_rate = (n_no + n_unjudged) / n_samples = 1 - "
    "matches / K (share 0-1; an ending without a verdict counts as a miss); no_rate_judged = "
    "n_no / n_judged (storyflow's judged-only variant, not the headline; NaN when none was "
    "judged).",
)

TENSION_STORIES = Table(
    "tension stories",
    {
        **_STORY,
        "judge": "object",
        "n_cuts": "int64",
        "n_unjudged": "int64",
        "no_rate": "float64",
        "no_rate_judged": "float64",
        "late_no_rate": "float64",
        "post_spike_convergence": "float64",
    },
    key=("story_id", "model", "judge"),
    extra=True,
    doc="Story statistics of the no-rate curve (no_rate per cut = 1 - matches / K): mean and "
    "late (pct >= 0.8) no-rate (shares 0-1); no_rate_judged: the mean of the cuts' judged-only "
    "no-rates (storyflow's variant, not the headline); post-spike "
    "convergence (mean over the curve's peaks of (min of the next cuts - peak) / peak x 100, "
    "percent, negative) and one inflection_rate_<angle> column per vertex-angle threshold "
    "(degrees; share of cuts 0-1).",
)

TENSION_PMI = Table(
    "tension PMI",
    {
        **_CUT,
        "n_tokens": "int64",
        "nll_alone": "float64",
        "nll_context": "float64",
        "pmi": "float64",
    },
    key=("story_id", "model", "cut"),
    doc="Per cut: mean NLL of the remainder's n_tokens tokens alone and after the prefix "
    "(nats/token), pmi = nll_alone - nll_context.",
)

TENSION_CALIBRATION = Table(
    "tension judge calibration",
    {
        "model": "object",
        "k": "int64",
        "embedding_model": "object",
        "seed": "int64",
        "half": "object",
        "n_stories": "int64",
        "n_forecasts": "int64",
        "n_empty": "int64",
        "threshold": "float64",
        "accuracy": "float64",
        "pairwise_accuracy": "float64",
        "mean_right": "float64",
        "mean_wrong": "float64",
    },
    key=("model", "half"),
    doc="Embedding-judge threshold (cosine) fitted on one half of ROCStories stories from the "
    "forecaster model's K forecasts per story (cosine with the right and the wrong ending), and "
    "its accuracy on both halves (shares 0-1); n_empty forecasts without text are left out.",
)

TENSION_CALIBRATION_COSINES = Table(
    "tension calibration cosines",
    {
        "model": "object",
        "story_id": "object",
        "sample": "int64",
        "half": "object",
        "right": "float64",
        "wrong": "float64",
        "context_right": "float64",
        "context_wrong": "float64",
    },
    key=("model", "story_id", "sample"),
    doc="One row per calibration forecast with text (ROCStories story, forecaster model): its "
    "half (fit or held-out, seeded per story) and the cosines (-1..1) of its sentence embedding "
    "with the story's right and wrong ending; context_right, context_wrong: the same for the "
    "story's four context sentences (the baseline of a forecaster that repeats the story). Read "
    "by the forecaster check (share with right > wrong) and the embedding judge's threshold and "
    "check.",
)

TENSION_CALIBRATION_JUDGMENTS = Table(
    "tension calibration judgments",
    {
        **TENSION_JUDGMENTS.columns,
        "ending": "object",
        "half": "object",
    },
    key=("story_id", "model", "judge", "sample", "ending"),
    doc="An LLM judge's verdicts on the held-out half's calibration forecasts of a forecaster "
    "(model): each forecast judged against the story's right ending (ending 'right', should "
    "match) and its wrong ending ('wrong', should not); score = P(Y) over {Y, N}, mass = P(Y) + "
    "P(N), match = P(Y) > 0.5 (missing without a verdict, see status).",
)

TENSION_GROUPS = Table(
    "tension group means",
    {
        "model": "object",
        "judge": "object",
        "k": "int64",
        **GROUP_SUMMARY,
        "flag": "object",
        **VALIDITY_LABELS,
    },
    doc="Mean, SD (n - 1) and percentile-bootstrap CI (over stories, inside the statistic's "
    "range) of a tension story statistic per group (forecaster, judge, K); n = stories with a "
    "value. flag: '' or why the CI is missing (one story) or rests on few stories (fewer than "
    "stats.min_group_size: a percentile interval of a few stories is rough). valid: the "
    "forecaster and the judge passed their validity checks "
    "(results/tension/tables/validity/<model>.csv); failed: the checks they failed ('' when "
    "valid).",
)

TENSION_EFFECTS = Table(
    "tension effects",
    {
        "model": "object",
        "judge": "object",
        "k": "int64",
        "contrast": "object",
        "group_a": "object",
        "group_b": "object",
        "measure": "object",
        "artefacts": "object",
        "pairing": "object",
        "n_a": "int64",
        "n_b": "int64",
        "mean_a": "float64",
        "mean_b": "float64",
        "diff": "float64",
        "diff_ci_low": "float64",
        "diff_ci_high": "float64",
        "t": "float64",
        "p_t": "float64",
        "w": "float64",
        "p_w": "float64",
        "g": "float64",
        "g_ci_low": "float64",
        "g_ci_high": "float64",
        "tested": "bool",
        "flag": "object",
        **VALIDITY_LABELS,
    },
    doc="Group a vs b: diff = mean difference a - b with its percentile-bootstrap CI (paired: "
    "mean of the per-prompt differences, prompts resampled; unpaired: difference of means, "
    "each group resampled), paired by prompt (paired t, Wilcoxon; HANNA: a = Human) or "
    "unpaired (Welch's t), Hedges' g with CI; artefacts: chat-artefact stories included or "
    "excluded. tested: both sides have at least stats.min_group_size stories (pairs); when "
    "not, n and means stay and the CI, tests and g are NaN, flag says why. valid, failed: as "
    "in the group means.",
)

TENSION_LIKELIHOOD = Table(
    "tension likelihood vs sampled",
    {
        "model": "object",
        "judge": "object",
        "pmi_model": "object",
        "n": "int64",
        "spearman_rho": "float64",
        "p": "float64",
    },
    doc="Spearman's rho of the story PMI (nats/token) and the sampled story no-rate.",
)
