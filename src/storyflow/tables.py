"""The tables passed between rules, each defined once: its columns, their dtypes and meaning.

Every intermediate of the workflow is a file (Parquet, or CSV for the human-readable tables
under ``results/<corpus>/tables/``). A rule that writes one builds it with :meth:`Table.frame`
or checks it with :meth:`Table.check`; a rule that reads one goes through :func:`read`, which
stops with one message naming the file, the missing columns and the columns found.

Units: NLLs and sequentiality are in nats per token (natural log); ``n_tokens`` counts the
scoring model's tokens; ``history`` is a label, ``"0"`` .. ``"H"`` or ``"full"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from storyflow.errors import StoryflowError

#: Columns that hold labels: read from CSV as text, never as numbers ("1" stays "1", "full" too).
TEXT_COLUMNS = frozenset(
    {
        "story_id",
        "story_type",
        "group",
        "model",
        "formulation",
        "history",
        "measure",
        "contrast",
        "group_a",
        "group_b",
        "genre",
        "pov",
        "document_id",
        "measure_a",
        "measure_b",
        "model_a",
        "model_b",
        "unit",
        "models",
        "corpus",
        "role",
        "check",
        "rule",
    }
)


class TableError(StoryflowError):
    """A table lacks columns its reader needs (names the file, the missing and found columns)."""


@dataclass(frozen=True)
class Table:
    """One table's schema: ``columns`` maps each column to its pandas dtype, in file order.

    ``key`` lists the columns that identify a row; ``extra`` says whether columns beyond
    ``columns`` may follow (label columns of a corpus, covariates per window, ...).
    """

    name: str
    columns: Mapping[str, str]
    key: tuple[str, ...] = ()
    extra: bool = False
    doc: str = field(default="", compare=False)

    @property
    def names(self) -> list[str]:
        """The column names, in order."""
        return list(self.columns)

    def empty(self) -> pd.DataFrame:
        """A table with these columns and dtypes and no rows."""
        return pd.DataFrame({c: pd.Series(dtype=d) for c, d in self.columns.items()})

    def frame(self, rows: Iterable[Sequence[Any]] | pd.DataFrame) -> pd.DataFrame:
        """``rows`` (tuples in column order, or a frame holding the columns) as this table."""
        if isinstance(rows, pd.DataFrame):
            frame = rows[self.names] if not self.extra else rows
        else:
            frame = pd.DataFrame(list(rows), columns=self.names)
        if frame.empty:
            return self.empty() if not self.extra else frame.astype(dict(self.columns))
        return frame.astype(dict(self.columns))

    def check(
        self,
        frame: pd.DataFrame,
        source: str | Path | None = None,
        needs: Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """``frame`` when it has every column of this table (or those in ``needs``), else
        :class:`TableError` naming ``source``, the missing and the found columns."""
        wanted = list(self.columns) if needs is None else list(needs)
        unknown = [c for c in wanted if c not in self.columns]
        if unknown:
            raise ValueError(f"{unknown} are not columns of the {self.name} table")
        missing = [c for c in wanted if c not in frame.columns]
        if missing:
            where = f"{source}: " if source else ""
            raise TableError(
                f"{where}the {self.name} table lacks column(s) {', '.join(missing)}; "
                f"it has {', '.join(map(str, frame.columns)) or 'no columns'}. It was probably "
                "written by another storyflow version or edited by hand: delete it and re-run "
                "the rule that makes it."
            )
        return frame


def read(table: Table, path: str | Path, needs: Iterable[str] | None = None) -> pd.DataFrame:
    """Read ``path`` (Parquet, or CSV with label columns kept as text) and check its columns
    (all of ``table``'s, or those in ``needs``)."""
    path = Path(path)
    if path.suffix == ".csv":
        header = pd.read_csv(path, nrows=0).columns
        frame = pd.read_csv(path, dtype={c: str for c in TEXT_COLUMNS if c in header})
    else:
        frame = pd.read_parquet(path)
    return table.check(frame, path, needs)


def read_all(table: Table, paths: str | Path | Sequence[str | Path]) -> pd.DataFrame:
    """:func:`read` each of ``paths`` and concatenate them (at least one path)."""
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    if not paths:
        raise StoryflowError(f"no {table.name} tables were given")
    return pd.concat([read(table, p) for p in paths], ignore_index=True)


# --------------------------------------------------------------------------- corpus stage

STORIES = Table(
    "stories",
    {
        "story_id": "object",
        "story_type": "object",
        "text": "object",
        "topic": "object",
        "has_topic": "bool",
    },
    key=("story_id",),
    extra=True,
    doc="One row per sampled story. story_type: the corpus's grouping label (HIPPOCORPUS "
    "memType, a book passage's genre/point of view, a HANNA model, a CSV's group column); "
    "topic: the story's summary or prompt (None when absent). Corpora add label columns.",
)

EXCLUDED = Table(
    "excluded stories",
    {"story_id": "object", "story_type": "object", "row": "int64", "reason": "object"},
    doc="Stories left out of a corpus, with the CSV row (1-based, header = 1) and the reason.",
)

SAMPLE_COUNTS = Table(
    "sample counts",
    {
        "story_type": "object",
        "n_in_corpus": "int64",
        "n_excluded": "int64",
        "n_sampled": "int64",
        "n_with_topic": "int64",
        "n_without_topic": "int64",
    },
    doc="Stories per story type: in the corpus, excluded, sampled, with and without a topic.",
)

SENTENCES = Table(
    "sentences",
    {"story_id": "object", "sentence_idx": "int64", "text": "object"},
    key=("story_id", "sentence_idx"),
    doc="One row per sentence (spaCy split), numbered 0, 1, 2, ... within each story.",
)

SENTENCE_COUNTS = Table(
    "sentence counts",
    {"story_id": "object", "story_type": "object", "n_sentences": "int64"},
    doc="Sentences per story.",
)

# --------------------------------------------------------------------------- NLL engine

#: The columns that identify one term (sentence, model, formulation, history size).
_TERM = {
    "story_id": "object",
    "sentence_idx": "int64",
    "model": "object",
    "formulation": "object",
    "history": "object",
}
#: The labels of a contrast's row (model, formulation and history size it was computed for).
_CELL = {"model": "object", "formulation": "object", "history": "object"}

NLL = Table(
    "NLL",
    {
        **_TERM,
        "n_history": "int64",
        "n_tokens": "int64",
        "nll": "float64",
        "truncated": "bool",
    },
    key=("story_id", "sentence_idx", "model", "formulation", "history"),
    doc="One row per term: nll = mean −ln p of the target sentence's n_tokens tokens (nats/"
    "token) after the requested history (sentences); n_history = sentences actually seen "
    "(fewer when truncated to fit the context window).",
)

NLL_COST = Table(
    "NLL cost",
    {
        "story_id": "object",
        "model": "object",
        "formulation": "object",
        "n_sentences": "int64",
        "story_tokens": "int64",
        "longest_sentence": "int64",
        "prefix_tokens": "int64",
        "beyond_window": "bool",
        "passes": "int64",
        "planned_tokens": "int64",
    },
    key=("story_id", "model", "formulation"),
    doc="The planned work of one story and formulation, from token counts alone (model's "
    "tokens): story_tokens = its sentences, prefix_tokens = start token + topic or the chat "
    "prefix, planned_tokens = prefix once + every forward pass's continuation; beyond_window: "
    "prefix + story longer than the context window (some rows truncated).",
)

LM_COST = Table(
    "language-model cost estimate",
    {
        "corpus": "object",
        "measure": "object",
        "stage": "object",
        "model": "object",
        "requests": "int64",
        "prompt_tokens": "int64",
        "generated_tokens": "int64",
        "prompt_rate": "float64",
        "generate_rate": "float64",
        "expected_s": "float64",
    },
    key=("corpus", "stage", "model"),
    doc="What one language-model stage of a corpus will cost with one model, estimated before "
    "it runs (storyflow.estimate): requests = questions or prompts sent; prompt_tokens = tokens "
    "the model evaluates (words x 1.3); generated_tokens = tokens it writes (upper bounds); "
    "prompt_rate, generate_rate: tokens/s from cost.rates (NaN: none configured); expected_s: "
    "seconds at those rates (NaN without a rate). A judge's row counts every forecaster's endings.",
)

NLL_EXCLUDED = Table(
    "NLL excluded stories",
    {
        "story_id": "object",
        "model": "object",
        "n_sentences": "int64",
        "story_tokens": "int64",
        "longest_sentence": "int64",
        "reason": "object",
    },
    key=("story_id", "model"),
    doc="Stories the NLL stage leaves out for a model (over nll.max_story_tokens, or a sentence "
    "longer than the context window), with the reason and what scoring them would cost.",
)

NLL_ESTIMATE = Table(
    "NLL estimate",
    {
        "model": "object",
        "n_stories": "int64",
        "n_excluded": "int64",
        "passes": "int64",
        "planned_tokens": "int64",
        "tokens_per_second": "float64",
        "expected_seconds": "float64",
    },
    key=("model",),
    doc="The NLL stage of one corpus per model, before it runs: stories to score and left "
    "out, forward passes and tokens planned, and the expected wall time at the configured rate "
    "(NaN without one).",
)

# --------------------------------------------------------------------------- sequentiality

SENTENCE_SEQUENTIALITY = Table(
    "sentence sequentiality",
    {
        **_TERM,
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
        **_CELL,
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
        **_CELL,
        "story_type": "object",
        "measure": "object",
        "n": "int64",
        "mean": "float64",
        "sd": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
    },
    doc="Mean, SD and t-based CI of story-level measures per story type (nats/token).",
)

EFFECTS = Table(
    "effect sizes",
    {
        **_CELL,
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
    "tested: both groups have at least validity.min_group_size stories; when not, t, df, p and g "
    "are NaN (the sizes and means stay).",
)

# --------------------------------------------------------------------------- narrative sense

NS_STORIES = Table(
    "narrative-sense stories",
    {"story_id": "object", "group": "object", "text": "object"},
    extra=True,
    doc="Stories of one narrative-sense source; group = the corpus's grouping label.",
)

LEMMAS = Table(
    "lemmas",
    {
        "story_id": "object",
        "group": "object",
        "n_words": "int64",
        "lemmas": "object",
        "positions": "object",
    },
    extra=True,
    doc="Content lemmas of a story with their word positions (0-based word tokens).",
)

PAIR_SCORES = Table(
    "narrative-sense story scores",
    {
        "story_id": "object",
        "group": "object",
        "n_words": "int64",
        "median_pmi_top": "float64",
        "pair_pmi": "object",
    },
    key=("story_id",),
    extra=True,
    doc="Per story: its lemma-pair PMIs (natural log, descending) and their summaries; the "
    "rank-sum test against a random story of its group adds p and the threshold verdict.",
)

# --------------------------------------------------------------------------- regressions

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

# --------------------------------------------------------------------------- every measure

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
    doc="results/<corpus>/comparison/measures.parquet: one row per story and model ('' when no "
    "score depends on a model); the corpus's label columns, n_sentences (spaCy sentences), n_words "
    "(word tokens), failed_measures (the row's measures that rest on a model that failed its "
    "validity check, space-separated; '' none: tables/measure_verdicts.csv says which checks), "
    "then one column per measure (units in tables/measure_units.csv). A score that depends on "
    "no model is repeated on each model's row.",
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
        "valid": "bool",
        "failed": "object",
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
        "valid": "bool",
        "failed": "object",
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
        "valid": "bool",
        "failed": "object",
    },
    key=("contrast", "model", "measure"),
    doc="Hedges' g (group a minus group b, unitless) with its CI, for every contrast, model and "
    "measure of a story table; means in the measure's unit. tested: both groups have at least "
    "validity.min_group_size scored stories (else g and its CI are NaN, sizes and means kept); "
    "valid: the measure does not rest on a model that failed its validity check (failed: "
    "'measure@model').",
)

# --------------------------------------------------------------------------- plot holes

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
    "human (share, -1..1) with a percentile bootstrap interval over prompts (validity.bootstrap, "
    "validity.seed). small_group: fewer prompts than validity.min_group_size: the difference "
    "gets no interval (not tested); the shares keep their Wilson intervals. "
    "valid / validity: the detector's verdict (results/plot_holes/tables/validity.csv); best: the "
    "valid detector with the highest CEEval-Full gain over always-no in that check.",
)

# ---- tension (ending forecasting; docs/tension.md)

_CUT = {
    "story_id": "object",
    "story_type": "object",
    "model": "object",
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
        "story_id": "object",
        "story_type": "object",
        "model": "object",
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
        "story_id": "object",
        "story_type": "object",
        "model": "object",
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
        **_CUT,
        "sample": "int64",
        "judge": "object",
        "score": "float64",
        "mass": "float64",
        "match": "boolean",
        "status": "object",
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
        "story_type": "object",
        "measure": "object",
        "n": "int64",
        "mean": "float64",
        "sd": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
        "flag": "object",
        "valid": "bool",
        "failed": "object",
    },
    doc="Mean, SD (n - 1) and percentile-bootstrap CI (over stories, inside the statistic's "
    "range) of a tension story statistic per group (forecaster, judge, K); n = stories with a "
    "value. flag: '' or why the CI is missing (one story) or rests on few stories (fewer than "
    "validity.min_group_size: a percentile interval of a few stories is rough). valid: the "
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
        "valid": "bool",
        "failed": "object",
    },
    doc="Group a vs b: diff = mean difference a - b with its percentile-bootstrap CI (paired: "
    "mean of the per-prompt differences, prompts resampled; unpaired: difference of means, "
    "each group resampled), paired by prompt (paired t, Wilcoxon; HANNA: a = Human) or "
    "unpaired (Welch's t), Hedges' g with CI; artefacts: chat-artefact stories included or "
    "excluded. tested: both sides have at least validity.min_group_size stories (pairs); when "
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


# ---- fabula entropy

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

FEI_STORY_INDICES = Table(
    "fabula-entropy story indices",
    {
        "pool": "object",
        "readers": "object",
        "n_readers": "int64",
        "population": "int64",
        "valid": "bool",
        "note": "object",
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
        "pool": "object",
        "readers": "object",
        "n_readers": "int64",
        "population": "int64",
        "valid": "bool",
        "note": "object",
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
    "reaches validity.min_group_size; when not, n and the means with their CIs are given, the "
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
    "validity.min_group_size stories (the CI rests on few stories). valid, n_readers, "
    "population: as in the story indices; headline: the headline measure "
    "(fabula_entropy.headline) on the headline pool ('pooled', else 'all').",
)

# --------------------------------------------------------------------------- replication

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
        "claim": "object",
    },
    key=("id",),
    doc="One headline figure of a paper per row, typed once from the paper's text "
    "(src/storyflow/data/published/<paper>.csv): id (stable key), source (file, line and table of "
    "../shared/papers), corpus (storyflow's name where one matches), quantity (what the number "
    "is: hedges_g, share_exceeding, no_rate, ceeval_full, ...), setting (the condition: "
    "formulation, h, judge, corruption), group (group or contrast), model (the paper's model, or "
    "'mean' over its models), value (NaN where the claim is a direction or an order only), "
    "direction ('+'/'-' for a signed claim, or an order 'a > b'), claim (in words).",
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
        "ours": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
        "ours_direction": "object",
        "n": "object",
        "models": "object",
        "validity": "object",
        "direction_agrees": "object",
        "ci_covers": "object",
        "verdict": "object",
        "note": "object",
    },
    key=("paper", "id"),
    doc="Each published figure of a paper beside ours (results/replication/<paper>.csv; "
    "docs/replication.md). published, published_direction: the paper's (PUBLISHED); ours: the "
    "same quantity computed the paper's way from this run, with its percentile bootstrap CI at "
    "stats.confidence (ci_low, ci_high; NaN where none), ours_direction ('+', '-', or the order "
    "found), n (what it rests on, in words), models (our models it rests on), validity (the "
    "verdict of the validity checks behind it: 'valid', 'failed: ...', 'not checked'); "
    "direction_agrees, ci_covers: 'yes', 'no' or 'n/a' (no direction to compare, no CI, or not "
    "computed); verdict: the comparison in words; note: why a figure was not computed, or what "
    "differs from the paper's setting.",
)
