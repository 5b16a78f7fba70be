"""Plot holes' tables: made story pairs, detectors' answers, baselines, scores and rates."""

from __future__ import annotations

from storyflow.tables.base import Table

PLOT_HOLE_STORIES = Table(
    "plot-hole stories",
    {
        "story_id": "object",
        "item_id": "object",
        "maker": "object",
        "version": "object",
        "has_error": "bool",
        "n_sentences": "int64",
        "sentences": "object",
        "error_lines": "object",
        "contr_lines": "object",
        "target_idx": "int64",
        "attribute_class": "object",
        "proposition": "object",
        "original": "object",
        "verification": "object",
        "provenance": "object",
    },
    key=("item_id",),
    doc="One row per story version shown to detectors. story_id: the source story; version: O "
    "(original), F (flawed), C (changed consistently), D (F without the establishing sentence); "
    "sentences: the version's sentences; error_lines / contr_lines: 1-based S_error and S_contr "
    "(empty unless has_error); target_idx: 0-based index of the sentence at the change site in "
    "this version (-1: none); verification: exact (controlled maker), unverified, yes or no "
    "(human verdict); provenance: the maker's settings and intermediate outputs (JSON).",
)

PLOT_HOLE_SKIPPED = Table(
    "plot-hole skipped stories",
    {"story_id": "object", "maker": "object", "reason": "object"},
    doc="Stories a maker could not edit (too short for three acts, too long, no usable "
    "attribute, an edit the filter dropped), with the reason.",
)

PLOT_HOLE_COVERAGE = Table(
    "plot-hole coverage",
    {
        "corpus": "object",
        "attribute_class": "object",
        "n_stories": "int64",
        "n_eligible": "int64",
        "n_with_candidate": "int64",
        "share": "float64",
    },
    doc="Controlled maker: of the eligible stories (three acts, within max_words), how many "
    "have a candidate of each attribute class (share 0-1; 'any': a candidate of a class the "
    "maker uses, i.e. the stories edited; the validation pool leaves adjectives out).",
)

PLOT_HOLE_ATTEMPTS = Table(
    "plot-hole maker attempts",
    {
        "story_id": "object",
        "attempt": "int64",
        "step": "object",
        "status": "object",
        "prompt": "object",
        "output": "object",
    },
    doc="The model maker's every step per story and attempt (proposition, relevance, "
    "counterfactual, judge): the prompt, the raw output and whether it parsed (status ok, "
    "unparseable, dropped:<reason>).",
)

PLOT_HOLE_ANSWERS = Table(
    "plot-hole answers",
    {
        "item_id": "object",
        "story_id": "object",
        "maker": "object",
        "version": "object",
        "detector": "object",
        "has_error": "bool",
        "p_error": "float64",
        "says_error": "bool",
        "answer": "object",
        "answer_status": "object",
        "pred_error": "object",
        "pred_contr": "object",
        "ceeval": "int64",
        "n_prompt_tokens": "int64",
    },
    key=("item_id", "detector"),
    doc="One row per story version × detector. p_error: the detector's P(yes: a continuity "
    "error) (closed choice; NaN for rule baselines and for versions left out); says_error: "
    "p_error > the threshold; answer: the raw localization answer (format closed: asked only "
    "after a yes; format paper: the whole tagged answer); answer_status: ok, unparseable, "
    "out_of_range (a line number outside the story), unmatched (format paper: the quoted lines "
    "of a set match no sentence), not_asked, or too_long (the version's prompt and answer do "
    "not fit the window: not asked, left out of the scores and listed in left_out.csv); "
    "pred_*: 1-based predicted lines (format paper: the sentences the quotes match); ceeval: "
    "the story's CEEval-Full score "
    "(0/1); n_prompt_tokens: tokens of the classification prompt (words for a served model "
    "without a tokenizer).",
)

PLOT_HOLE_SURPRISAL = Table(
    "plot-hole surprisal",
    {
        "item_id": "object",
        "story_id": "object",
        "version": "object",
        "model": "object",
        "sentence_idx": "int64",
        "n_tokens": "int64",
        "nll": "float64",
    },
    key=("item_id", "model", "sentence_idx"),
    doc="Mean NLL (nats/token) of each sentence of a story version given every sentence before "
    "it (one pass over the whole version, plain format).",
)

PLOT_HOLE_SCORES = Table(
    "plot-hole scores",
    {
        "corpus": "object",
        "maker": "object",
        "detector": "object",
        "kind": "object",
        "n": "int64",
        "n_flawed": "int64",
        "accuracy": "float64",
        "ceeval_full": "float64",
        "ceeval_ci_low": "float64",
        "ceeval_ci_high": "float64",
        "ceeval_pos": "float64",
        "precision": "float64",
        "recall": "float64",
        "specificity": "float64",
        "n_unparseable": "int64",
        "unparseable_policy": "object",
        "n_excluded": "int64",
        "n_left_out": "int64",
        "verification": "object",
        "valid": "boolean",
        "validity": "object",
    },
    doc="Per corpus × maker × detector (kind: model, nli, surprisal or baseline) on the "
    "balanced set of flawed and original stories: accuracy, CEEval-Full with its bootstrap CI, "
    "CEEval-Pos, precision, recall, specificity (shares 0-1), unparseable localization answers "
    "(count), the policy they were scored under (wrong or exclude) and the story versions it "
    "excluded (count); n_left_out: versions left out because a version of the story did not "
    "fit the window (with its twin; listed in left_out.csv); verification: exact, published, "
    "unverified or verified; valid: the detector's verdict in "
    "results/plot_holes/tables/validity.csv "
    "(empty: not checked, e.g. a baseline); validity: passed, failed: <checks>, or not checked "
    "(why).",
)

PLOT_HOLE_LEFT_OUT = Table(
    "plot-hole versions left out",
    {
        "corpus": "object",
        "detector": "object",
        "item_id": "object",
        "story_id": "object",
        "maker": "object",
        "version": "object",
        "n_prompt_tokens": "int64",
        "reason": "object",
    },
    doc="Story versions a detector was not asked because they do not fit its window "
    "(plot_holes.detection.n_ctx, or the model's trained context): no P(error), out of the "
    "scores (with their twin version), the human-vs-LLM rates and the story measures (NaN). "
    "n_prompt_tokens: the classification prompt's tokens.",
)

#: The group of the rates table's row that pools every LLM of a prompt.
ALL_LLMS = "all LLMs"

PLOT_HOLE_RATES = Table(
    "plot-hole human-vs-LLM rates",
    {
        "detector": "object",
        "group": "object",
        "n_prompts": "int64",
        "rate_human": "float64",
        "rate_human_ci_low": "float64",
        "rate_human_ci_high": "float64",
        "rate_llm": "float64",
        "rate_llm_ci_low": "float64",
        "rate_llm_ci_high": "float64",
        "difference": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
        "small_group": "bool",
        "valid": "boolean",
        "validity": "object",
        "best": "bool",
    },
    doc="HANNA: per detector and LLM, the shares of the human and of that LLM's stories the "
    "detector calls flawed on the same prompts (n_prompts; a prompt whose story was left out "
    "for length is dropped), each with its Wilson interval, and the paired difference LLM − "
    "human (share, -1..1) with a percentile bootstrap interval over prompts (stats.resamples, "
    "stats.seed); group 'all LLMs' pools them (per prompt, the mean of its LLM stories "
    "minus the human story). small_group: fewer prompts than stats.min_group_size: the "
    "difference gets no interval (not tested); the shares keep their Wilson intervals. "
    "valid / validity: the detector's verdict (results/plot_holes/tables/validity.csv); best: the "
    "valid detector with the highest CEEval-Full gain over always-no in that check.",
)
