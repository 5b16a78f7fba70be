"""Replication's tables: the papers' published figures and ours beside them."""

from __future__ import annotations

from storyflow.tables.base import Table

PUBLISHED = Table(
    "published results",
    {
        "id": "object",
        "source": "object",
        "corpus": "object",
        "quantity": "object",
        "setting": "object",
        "group": "object",
        "model": "object",
        "value": "float64",
        "direction": "object",
        "decided_by": "object",
        "competitors": "object",
        "claim": "object",
        "precision": "float64",
    },
    key=("id",),
    doc="One headline figure of a paper per row, typed once from the paper's text "
    "(src/storyflow/data/published/<paper>.csv): id (stable key), source (file, line and table of "
    "../shared/papers), corpus (storyflow's name where one matches), quantity (what the number "
    "is: hedges_g, share_exceeding, no_rate, ceeval_full, ...), setting (the condition: "
    "formulation, h, judge, corruption), group (group or contrast), model (the paper's model, or "
    "'mean' over its models), value (NaN where the claim is a direction or an order only), "
    "direction ('+'/'-' for a claimed effect, '0' for a claim of no effect, 'p > X', or an order "
    "'a > b'; empty for a value no sentence of the paper reads, which is a value claim), "
    "decided_by (the line of the paper whose sentence decides the claim, or 'none: ...' for a "
    "printed value no sentence reads), competitors (the ids of the other values in the same "
    "column of the paper's table, ';'-separated: a value claim agrees only when our interval "
    "excludes them), claim (in words); precision, added on reading: half a unit in the last digit "
    "the paper prints of value (0.005 for '0.08'; NaN without a value), how far the printed figure "
    "may lie from the paper's unrounded one.",
)

REPLICATION = Table(
    "replication",
    {
        "paper": "object",
        "id": "object",
        "source": "object",
        "claim": "object",
        "corpus": "object",
        "quantity": "object",
        "setting": "object",
        "group": "object",
        "paper_model": "object",
        "published": "float64",
        "published_direction": "object",
        "claim_type": "object",
        "ours": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
        "ours_direction": "object",
        "n": "object",
        "models": "object",
        "validity": "object",
        "failed": "bool",
        "verdict": "object",
        "reason": "object",
        "ci_covers": "object",
        "paper_models": "object",
        "paper_min": "float64",
        "paper_max": "float64",
        "holds_paper_models": "object",
        "same_estimate_as": "object",
        "units": "float64",
        "unit": "object",
        "n_to_decide": "float64",
        "to_decide": "object",
        "d33": "float64",
        "small_telescopes": "object",
        "excludes_d33": "bool",
        "n_to_exclude_d33": "float64",
        "n_to_decide_min": "float64",
        "n_to_decide_max": "float64",
        "available": "float64",
        "beyond_corpus": "bool",
        "decide_tokens": "float64",
        "decide_hours_cpu": "float64",
        "decide_hours_gpu": "float64",
        "decide_rates": "object",
        "note": "object",
    },
    key=("paper", "id"),
    doc="Each published figure of a paper beside ours (results/replication/<paper>.csv; "
    "docs/replication.md). published, published_direction: the paper's (PUBLISHED); claim_type: "
    "what the paper claims (effect, no effect, order, significant, none significant, value); "
    "ours: the same quantity computed the paper's way from this run (for an order, the "
    "difference of its two sides, positive when it holds; for a p-value claim, our BH-adjusted "
    "p), with its percentile bootstrap CI at stats.confidence (ci_low, ci_high; NaN where none), "
    "ours_direction ('+', '-', or the order found), n (what it rests on, in words), models (our "
    "models it rests on), validity (the verdict of the validity checks behind it: 'valid', "
    "'failed: ...', 'not checked'), failed (whether it is 'failed: ...': then not judged); "
    "verdict: agrees, disagrees, inconclusive or not judged, by "
    "the rule of docs/replication.md (from the interval, never the point estimate's sign), with "
    "its reason in words; ci_covers: 'yes', 'no' or 'n/a' (our interval holds the published "
    "value: size, apart from the verdict); for a row of the mean over the paper's models: "
    "paper_models (the paper's per-model values of the same figure), paper_min and paper_max "
    "(their range) and holds_paper_models (those our interval holds, 'none' when it holds "
    "none); same_estimate_as (the id of the first row whose estimate this row re-uses: the "
    "two are one finding); what it would take to decide (docs/replication.md, 'What it would "
    "take'): units (resampled units of our smaller group) and unit (what one is: stories, "
    "books, prompts or story versions), "
    "n_to_decide (units per group at which our interval, at our estimate and spread, would "
    "decide an inconclusive row with replication.power's chance, 80% by default) and "
    "to_decide (what deciding means, or why it cannot), d33 "
    "(Hedges' g the original sample had 33% power to detect), small_telescopes (the reading "
    "of our interval against d33, in words), excludes_d33 (whether it lies wholly below d33 on "
    "the claimed side, or on the other side of 0) and n_to_exclude_d33 (units per group at "
    "which it would), "
    "n_to_decide_min, n_to_decide_max (the least and most units per group over the true values "
    "our interval holds, its spread kept; inf: at some of them no sample decides), "
    "available (the units the corpus holds in our smaller group; NaN: not known to the run) and "
    "beyond_corpus (whether n_to_decide exceeds it: then no sample of this corpus decides the "
    "row), decide_tokens (NLL tokens of scoring n_to_decide units per group with the row's "
    "models) and decide_hours_cpu, decide_hours_gpu (those tokens with each model at its own "
    "rate, named in decide_rates: replication.rates); note: why a "
    "figure was not computed, or what differs from the paper's setting.",
)

CONTRAST_ANSWERS = Table(
    "contrast answers",
    {
        "corpus": "object",
        "measure": "object",
        "contrast": "object",
        "group_a": "object",
        "group_b": "object",
        "formulation": "object",
        "model": "object",
        "histories": "object",
        "design": "object",
        "effect_size": "object",
        "headline": "bool",
        "why": "object",
        "g": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
        "confidence": "float64",
        "band": "float64",
        "n_a": "int64",
        "n_b": "int64",
        "units_a": "int64",
        "units_b": "int64",
        "answer": "object",
        "direction": "object",
        "reason": "object",
        "n_to_decide": "float64",
        "to_decide": "object",
        "n_to_decide_min": "float64",
        "n_to_decide_max": "float64",
        "decide_tokens": "float64",
        "decide_hours_cpu": "float64",
        "decide_hours_gpu": "float64",
        "decide_rates": "object",
    },
    key=("corpus", "measure", "contrast", "formulation", "histories", "design", "model"),
    doc="The answer to each contrast of a corpus (results/<corpus>/sequentiality/tables/"
    "contrast_answers.csv; storyflow.contrast_answers.answers). Each contrast's first row is its "
    "headline (headline True; why says what it reads and why: docs/method.md, 'The headline of "
    "a contrast'); then one row per formulation, histories, design and sequentiality model, "
    "and, where there are several models, a row whose model is 'mean' (the mean over the "
    "models). measure: the story measure compared ('seq': story sequentiality, nats/token, "
    "answered the paper's way; where the comparison of measures runs on the corpus, each other "
    "story measure by name, e.g. tension.no_rate.embedding, from its separation table: one row "
    "per contrast and model, formulation and histories '', model '' for a measure of no model, "
    "g over the stories with its normal-approximation interval, deciding priced in units "
    "only); group_a, group_b: the groups' names; histories: the history sizes h summarised "
    "('1-H', the median over them, or 'full', the full history alone); design: 'unmatched' "
    "(stories as independent draws of each group) or 'matched' (stories sharing a block, the "
    "stories table's block column, matched; only on a corpus with blocks); effect_size: 'g' "
    "(Hedges' g, pooled SD) for unmatched rows, 'g_av' (Lakens 2013: the mean matched "
    "difference over the mean of the two groups' SDs, on the same scale as g) for matched "
    "ones; g: Fiction Flows' aggregate of that effect size, group a minus group b (unitless; "
    "positive = group a higher): the model's median over those h, or for 'mean' the mean of "
    "the models' medians; ci_low, ci_high: its percentile bootstrap interval at confidence "
    "(stats.confidence; unmatched: stories, or a book's passages together, resampled within "
    "each group; matched: whole blocks resampled; the same resamples for every model; NaN when "
    "a group is empty); band: the equivalence band's half-width in g "
    "(replication.equivalence_band); n_a, n_b: stories of each group scored by every model "
    "(matched: those in blocks holding both groups); units_a, units_b: the resampled units "
    "(books, the stories themselves, or for matched rows the blocks holding both groups); "
    "answer, read from the interval by the replication's rule for a claim of no known "
    "direction: 'a difference' (the interval excludes 0 and reaches beyond the band), 'no "
    "difference' (inside -band..band, holding 0), 'smaller than the band' (excludes 0, inside "
    "the band), 'inconclusive' (holds 0, reaches beyond the band) or 'not tested' (no "
    "interval, or fewer than stats.min_group_size units); direction: 'group a higher' or "
    "'group a lower' for a difference ('' otherwise); reason: the reading in words; for an "
    "inconclusive row, n_to_decide (units per group at which the interval, at this estimate "
    "and spread, would lie inside the band or exclude 0 with replication.power's chance, "
    "whichever needs fewer; NaN when none does) and to_decide (which, in words), "
    "n_to_decide_min, n_to_decide_max (the least and most units per group over the true "
    "values the interval holds, its spread kept; inf: at "
    "some of them no sample decides), decide_tokens (NLL tokens of scoring n_to_decide units "
    "per group with the row's models) and decide_hours_cpu, decide_hours_gpu (those tokens "
    "with each model at its own rate, named in decide_rates: replication.rates).",
)
