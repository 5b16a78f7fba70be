"""Fabula entropy's tables: passage versions and questions, the readers' answers, the indices and
the comparison of original and corrupted versions."""

from __future__ import annotations

from storyflow.tables.base import Table

FEI_VERSIONS = Table(
    "fabula-entropy story versions",
    {
        "story_id": "object",
        "version": "object",
        "passage": "object",
        "condition": "object",
        "k": "int64",
        "n_lines": "int64",
        "text": "object",
    },
    key=("story_id", "version", "passage"),
    doc="One row per passage version a reader is shown. passage: 'plot' (ETC: the story's "
    "sentences in plot points, one numbered line each) or 'seg1', 'seg2', ... (EWC: segments of "
    "fabula_entropy.segment_lines sentences); version: original, shuffle, wrong_ending, "
    "antonym_k<k>; condition: original, shuffle, wrong_ending or antonym; k: corruptions made (0 "
    "for the original); n_lines: numbered lines; text: the lines joined by line breaks.",
)

FEI_CORRUPTIONS = Table(
    "fabula-entropy corruptions",
    {
        "story_id": "object",
        "version": "object",
        "passage": "object",
        "kind": "object",
        "attempt": "int64",
        "line": "int64",
        "original": "object",
        "changed": "object",
        "detail": "object",
    },
    doc="One row per change of a corrupted passage: the line (0-based; a plot point for ETC, a "
    "shuffle's first point), its text before and after, what changed (word -> antonym, new "
    "order) and the attempt (0-based) whose seed made it.",
)

FEI_QUESTIONS = Table(
    "fabula-entropy questions",
    {
        "story_id": "object",
        "version": "object",
        "passage": "object",
        "kind": "object",
        "question_id": "object",
        "template": "object",
        "provenance": "object",
        "line": "int64",
        "word_line": "int64",
        "word": "object",
        "text": "object",
        "prior_texts": "object",
        "truth": "float64",
    },
    key=("story_id", "version", "question_id"),
    doc="One row per question asked about a passage version. kind: ewc, etc or control; "
    "provenance: paper (the template's wording is the paper's) or storyflow (the project's own); "
    "line: the line the question names (0-based; ETC: Line N of the pair N-1, N; EWC "
    "'contradicts': another line than the word's; -1 for controls); word_line: the EWC word's "
    "own line (-1 otherwise); word: the EWC word as it reads in this version; prior_texts: the "
    "question with its content replaced by fillers, for the template-level content-free prior "
    "(one or two texts joined by a line break); truth: a control's known answer (1 yes, 0 no), "
    "else NaN.",
)

FEI_EXCLUDED = Table(
    "fabula-entropy exclusions",
    {"story_id": "object", "kind": "object", "condition": "object", "reason": "object"},
    doc="Stories (or one corrupted version of a story: condition) left out of an index, with "
    "the reason.",
)

FEI_ANSWERS = Table(
    "fabula-entropy answers",
    {
        "story_id": "object",
        "version": "object",
        "question_id": "object",
        "model": "object",
        "variant": "object",
        "reader": "object",
        "p_yes": "float64",
        "p_yes_raw": "float64",
        "mass": "float64",
        "low_mass": "bool",
    },
    key=("story_id", "version", "question_id", "reader"),
    doc="One row per reader and question: p_yes = P(yes) renormalised over the yes/no label "
    "variants (calibrated when calibration is on; p_yes_raw before), mass = the labels' share of "
    "the model's probability (0-1), low_mass = mass below fabula_entropy.min_mass. reader = "
    "model/variant.",
)

FEI_COST = Table(
    "fabula-entropy answer cost",
    {
        "model": "object",
        "n_questions": "int64",
        "n_answers": "int64",
        "n_calibration": "int64",
        "seconds": "float64",
        "answers_per_second": "float64",
        "tokens_evaluated": "int64",
    },
    doc="Per model: questions, answers (questions × prompt variants, plus calibration prompts), "
    "of them n_calibration content-free prompts (the priors), wall seconds of answering (model "
    "loaded), answers per second and tokens run through it.",
)

FEI_READERS = Table(
    "fabula-entropy readers",
    {
        "reader": "object",
        "model": "object",
        "variant": "object",
        "n_stories": "int64",
        "n_controls": "int64",
        "auc": "float64",
        "auc_ci_low": "float64",
        "auc_ci_high": "float64",
        "balanced_accuracy": "float64",
        "balanced_accuracy_ci_low": "float64",
        "balanced_accuracy_ci_high": "float64",
        "auc_word": "float64",
        "auc_order": "float64",
        "auc_raw": "float64",
        "balanced_accuracy_raw": "float64",
        "share_yes_controls": "float64",
        "passed": "bool",
        "failed": "object",
        "mean_mass": "float64",
        "share_low_mass": "float64",
        "share_yes": "float64",
    },
    doc="The validity check of each reader on the control questions (known answers): ROC AUC of "
    "P(yes) against the truth (0.5 = chance) and balanced accuracy of its yes/no at P(yes) > 0.5 "
    "(0.5 for a reader that always gives the same answer), each with its percentile bootstrap "
    "interval over stories; on the calibrated P(yes) when calibration is on (auc_raw, "
    "balanced_accuracy_raw: before calibration); auc_word, auc_order: per control kind; "
    "share_yes_controls: share of controls answered yes; passed: every check of "
    "validity.reader reached its threshold (failed: the checks that did not); mean label mass, "
    "share of low-mass answers and share of P(yes) > 0.5 over all its answers.",
)

_POOL_DOC = (
    "pool: one reader (model/variant), one model (its variants), 'pooled' (the readers that "
    "passed the validity check: the headline pool) or 'all' (every reader; the headline pool "
    "when none passed); readers: the readers it rests on; n_readers: their number; population: "
    "the answers per question its hard index rests on (n_readers x fabula_entropy.samples; for "
    "human answers the mean number of participants per question); valid: every one of them "
    "passed; note: what limits the pool in words (one answer per question: its hard entropy is "
    "0 on every question; one reader sampled: its own uncertainty; readers that failed)."
)

#: The reader pool a row rests on (see _POOL_DOC).
_POOL = {
    "pool": "object",
    "readers": "object",
    "n_readers": "int64",
    "population": "int64",
    "valid": "bool",
    "note": "object",
}

FEI_STORY_INDICES = Table(
    "fabula-entropy story indices",
    {
        **_POOL,
        "story_id": "object",
        "version": "object",
        "condition": "object",
        "k": "int64",
        "kind": "object",
        "n_passages": "int64",
        "n_questions": "int64",
        "hard": "float64",
        "soft": "float64",
        "reader_entropy": "float64",
        "disagreement": "float64",
    },
    doc="EWC or ETC per story version and reader pool, in bits, the mean over the version's "
    "questions (all its passages): hard (the paper's index) = mean of h(share of yes among the "
    "readers' answers: each reader's P(yes) > 0.5, or with fabula_entropy.samples the expected "
    "h over that many answers per reader drawn from its P(yes)); soft = mean of h(mean P(yes)), "
    "= reader_entropy (mean of each reader's own h) + disagreement. Which is the headline: "
    "fabula_entropy.headline. " + _POOL_DOC,
)

FEI_COMPARISON = Table(
    "fabula-entropy original vs corrupted",
    {
        **_POOL,
        "kind": "object",
        "condition": "object",
        "measure": "object",
        "headline": "bool",
        "n": "int64",
        "tested": "bool",
        "mean_original": "float64",
        "ci_low_original": "float64",
        "ci_high_original": "float64",
        "mean_corrupted": "float64",
        "ci_low_corrupted": "float64",
        "ci_high_corrupted": "float64",
        "diff": "float64",
        "diff_ci_low": "float64",
        "diff_ci_high": "float64",
        "wilcoxon_p": "float64",
        "g": "float64",
        "g_ci_low": "float64",
        "g_ci_high": "float64",
    },
    doc="Per pool, index kind, corrupted version (condition) and measure (hard, soft): n stories "
    "with both versions (the original read over the same passages as the corrupted version), "
    "the means of the index (bits) with percentile bootstrap CIs over stories, the paired "
    "difference corrupted - original with its bootstrap CI, the two-sided Wilcoxon signed-rank p "
    "and Hedges' g (corrupted vs original, positive = corrupted higher) with its CI. tested: n "
    "reaches stats.min_group_size; when not, n and the means with their CIs are given, the "
    "difference has no CI and there is no test (the paper reports no test: Wilcoxon and g are "
    "storyflow's). headline: the row is the headline measure (fabula_entropy.headline) on the "
    "headline pool ('pooled', else 'all'). " + _POOL_DOC,
)

FEI_DOSE = Table(
    "fabula-entropy means per version",
    {
        "pool": "object",
        "valid": "bool",
        "n_readers": "int64",
        "population": "int64",
        "kind": "object",
        "version": "object",
        "condition": "object",
        "k": "int64",
        "measure": "object",
        "headline": "bool",
        "n": "int64",
        "small_group": "bool",
        "mean": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
    },
    doc="Mean index (bits) per pool, kind, version and measure with its percentile bootstrap CI "
    "over stories; k: corruptions (0 = original; EWC: antonym swaps per segment; ETC: one "
    "shuffled span, or the wrong ending, condition wrong_ending); small_group: fewer than "
    "stats.min_group_size stories (the CI rests on few stories). valid, n_readers, "
    "population: as in the story indices; headline: the headline measure "
    "(fabula_entropy.headline) on the headline pool ('pooled', else 'all').",
)
