"""Mixed-effects regressions of sequentiality on coherence covariates (docs/method.md §7).

For a formulation (``"context"`` by default: NLL_∅ and NLL_C∅) and a history size h, the rows
are the sentences of every story scored by every language model, joined with the covariates of
:mod:`storyflow.measures.sequentiality.covariates` at window w = h. Two specifications per h:

- ``gain``: (NLL_∅ − NLL_C∅) ~ model + covariates + (1 | story_id)
- ``raw``:  NLL_C∅ ~ NLL_∅ + model + covariates + (1 | story_id)

Outcomes stay in nats/token. Continuous predictors (NLL_∅ included) are z-scored on the rows of
the fit, so an estimate is the change in nats/token per standard deviation; 0/1 indicators are
entered as they are (change when the indicator is 1); ``model`` is a treatment-coded factor
whose reference is the first model of the config. The fit is ``lmerTest::lmer(..., REML =
FALSE)`` (maximum likelihood) run in R through rpy2; p-values use Satterthwaite degrees of
freedom; Benjamini–Hochberg adjusts them across a specification's coefficients (all but the
intercept). Warnings, messages, convergence codes and singular fits are returned with the fit and
written to the diagnostics table; nothing R reports is dropped.

A story's first sentence has no preceding sentence, so no history and no window covariates: it
is left out of every fit (the diagnostics count it), as are predictors that are constant in the
data (e.g. a connective category that never occurs; listed in the diagnostics).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.lmer import LmerFit, check_r, fit_lmer
from storyflow.measures.sequentiality.covariates import (
    CONNECTIVE_COLUMNS,
    SENTENCE_MEASURES,
    WINDOW_MEASURES,
)

log = logging.getLogger(__name__)

KINDS = ("gain", "raw")
GROUP = "story_id"
#: Window-free continuous covariates (z-scored) and 0/1 covariates (entered as they are).
CONTINUOUS_SENTENCE = SENTENCE_MEASURES
#: Story-level continuous covariates (z-scored; each of a story's sentences gets its story's
#: value), present when their table is given: the narrative-sense score
#: (:func:`story_covariates`).
CONTINUOUS_STORY = ("narrative_sense",)
BINARY = (*CONNECTIVE_COLUMNS, "rhetorical_disrupting")
LABELS = {
    "lemma_overlap": "content-word overlap",
    "embedding_sim": "embedding similarity",
    "tense_distance": "tense distance",
    "agent_continuity": "agent continuity",
    "length_delta": "length change",
    "n_tokens": "length (tokens)",
    "rare_word_rate": "rare-word rate",
    "clause_count": "clause count",
    "tree_depth": "tree depth",
    "narrative_sense": "narrative sense (story, median top-pair PMI)",
    "conn_temporal": "temporal connective",
    "conn_causal": "causal connective",
    "conn_contrastive": "contrastive connective",
    "conn_additive": "additive connective",
    "conn_onset": "connective at onset",
    "rhetorical_disrupting": "flow-disrupting relation",
    "nll_base": "NLL without context",
    "model": "language model",
    "(Intercept)": "intercept",
}
#: Covariates whose value comes from a substitute tool: label suffix taken from this column.
SOURCE_COLUMNS = {
    "rhetorical_disrupting": "rhetorical_source",
    "agent_continuity": "agent_source",
    "embedding_sim": "embedding_model",
}
COEFFICIENT_COLUMNS = tables.COEFFICIENTS.names
DIAGNOSTIC_COLUMNS = tables.DIAGNOSTICS.names


@dataclass(frozen=True)
class Spec:
    """One model specification: ``kind`` (gain | raw) at history ``history`` ("1", "3", ...)."""

    kind: str
    history: str

    @property
    def name(self) -> str:
        return f"{self.kind}_h{self.history}"

    @classmethod
    def parse(cls, name: str) -> Spec:
        match = re.fullmatch(r"(gain|raw)_h([1-9][0-9]*)", name)
        if not match:
            raise StoryflowError(f"bad regression specification {name!r} (e.g. gain_h1, raw_h3)")
        return cls(match.group(1), match.group(2))


# --------------------------------------------------------------------------------------------
# Data and design


def covariate_terms(history: str, story: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """Continuous and binary covariate columns used at history ``history`` (window w = h).

    ``story``: the story-level columns present (:data:`CONTINUOUS_STORY`), appended to the
    continuous ones.
    """
    continuous = [f"{m}_h{history}" for m in WINDOW_MEASURES] + list(CONTINUOUS_SENTENCE)
    return continuous + [c for c in CONTINUOUS_STORY if c in story], list(BINARY)


def base_name(term: str) -> str:
    """Covariate name without the window suffix (``lemma_overlap_h3`` → ``lemma_overlap``)."""
    return re.sub(r"_h[1-9][0-9]*$", "", term)


def _scored(sequentiality: pd.DataFrame, formulation: str, history: str) -> pd.DataFrame:
    """The sentence sequentiality rows of one formulation and history (an error when none)."""
    seq = sequentiality[
        (sequentiality["formulation"] == formulation)
        & (sequentiality["history"].astype(str) == history)
    ]
    if seq.empty:
        raise StoryflowError(
            f"no sentence sequentiality rows with formulation {formulation!r} and history "
            f"{history!r}: score them (nll.formulations, nll.max_history) or change "
            "regression.formulation / regression.histories"
        )
    return seq


def _with_covariates(seq: pd.DataFrame, covariates: pd.DataFrame) -> pd.DataFrame:
    """Sequentiality rows joined with their sentence's covariates (an error when a row has
    none: the tables come from different sentence tables)."""
    keys = ["story_id", "sentence_idx"]
    rows = seq.merge(covariates, on=keys, how="left", validate="many_to_one", indicator=True)
    lacking = rows[rows["_merge"] != "both"]
    if len(lacking):
        example = lacking[keys].drop_duplicates().head(3).to_dict(orient="records")
        raise StoryflowError(
            f"{len(lacking)} sequentiality rows have no covariates (e.g. {example}): the "
            "covariate table was computed from another sentence table; rerun the workflow"
        )
    return rows.drop(columns="_merge")


def _with_story_covariates(rows: pd.DataFrame, story_covariates: pd.DataFrame) -> pd.DataFrame:
    """Rows joined on ``story_id`` with the story-level covariates (:data:`CONTINUOUS_STORY`;
    an error when a story is absent from the table)."""
    story = story_covariates[["story_id", *CONTINUOUS_STORY]]
    absent = sorted(set(rows["story_id"]) - set(story["story_id"]))
    if absent:
        raise StoryflowError(
            f"{len(absent)} stories have no story-level covariates (e.g. {absent[:3]}): "
            "the story table was computed from another corpus; rerun the workflow"
        )
    # a story without a score (too few words) keeps NaN: build_design drops and counts it
    return rows.merge(story, on="story_id", how="left", validate="many_to_one")


def regression_rows(
    sequentiality: pd.DataFrame,
    covariates: pd.DataFrame,
    *,
    formulation: str,
    history: str,
    story_covariates: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The rows of one history: sentence sequentiality joined with the sentence's covariates.

    Args:
        sequentiality: Sentence-level tables of all models (``...sequentiality.scores``).
        covariates: The covariate table of the corpus.
        formulation, history: Which rows to use ("context", "1").
        story_covariates: Optional story-level table (``story_id`` and columns of
            :data:`CONTINUOUS_STORY`), joined on ``story_id``.

    Returns:
        The rows with a preceding sentence, and counts: ``n_rows_scored`` (rows of this
        formulation and history), ``n_first_sentences_dropped`` (rows without a preceding
        sentence), ``n_truncated_kept`` (rows whose history was truncated to the context window).

    Raises:
        StoryflowError: no rows for this formulation and history, or sentences (stories)
            without covariates (the tables come from different samples).
    """
    rows = _with_covariates(_scored(sequentiality, formulation, history), covariates)
    if story_covariates is not None:
        rows = _with_story_covariates(rows, story_covariates)
    first = rows["n_history"] == 0
    counts = {
        "n_rows_scored": len(rows),
        "n_first_sentences_dropped": int(first.sum()),
        "n_truncated_kept": int(rows.loc[~first, "truncated"].sum()),
    }
    return rows[~first].reset_index(drop=True), counts


@dataclass
class Design:
    """Everything one fit needs: the frame, formula, factors and what was dropped or scaled."""

    frame: pd.DataFrame
    formula: str
    factors: dict[str, list[str]]
    scaling: dict[str, str]
    predictor_sd: dict[str, float]
    dropped: list[str]
    n_missing_dropped: int


def build_design(rows: pd.DataFrame, spec: Spec, models: Sequence[str]) -> Design:
    """Outcome, z-scored continuous predictors, indicators and the model factor of ``spec``.

    Rows with a missing predictor are dropped (counted), then predictors constant over the
    remaining rows are dropped (listed), and the ``model`` factor when only one model remains.
    """
    continuous, binary = covariate_terms(spec.history, story=list(rows.columns))
    if spec.kind == "gain":
        outcome = "seq"
    else:
        outcome = "nll_context"
        continuous = ["nll_base", *continuous]
    missing = [c for c in [outcome, *continuous, *binary] if c not in rows.columns]
    if missing:
        raise StoryflowError(f"regression rows lack columns {missing}")
    used = [outcome, *continuous, *binary]
    complete = rows[used].notna().all(axis=1)
    if not complete.all():
        log.warning(
            "%s: %d rows with a missing value dropped (columns %s)",
            spec.name,
            int((~complete).sum()),
            [c for c in used if rows[c].isna().any()],
        )
    data = rows[complete].reset_index(drop=True)
    frame = pd.DataFrame({outcome: data[outcome].astype(float), GROUP: data[GROUP].astype(str)})
    dropped: list[str] = []
    scaling: dict[str, str] = {}
    sds: dict[str, float] = {}
    for column in continuous:
        values = data[column].astype(float)
        sd = float(values.std(ddof=1)) if len(values) > 1 else 0.0
        if not np.isfinite(sd) or sd == 0.0:
            dropped.append(f"{column} (constant)")
            continue
        frame[column] = (values - values.mean()) / sd
        scaling[column], sds[column] = "z-score", sd
    for column in binary:
        values = data[column].astype(float)
        if values.nunique() < 2:
            dropped.append(f"{column} (constant)")
            continue
        frame[column] = values
        scaling[column] = "0/1"
    factors: dict[str, list[str]] = {GROUP: sorted(frame[GROUP].unique())}
    present = [m for m in models if m in set(data["model"])]
    present += sorted(set(data["model"]) - set(present))
    terms = [c for c in frame.columns if c not in (outcome, GROUP)]
    if len(present) > 1:
        frame["model"] = data["model"].astype(str)
        factors["model"] = present
        scaling["model"] = f"factor (reference {present[0]})"
        terms = ["model", *terms]
    else:
        dropped.append(f"model (only {present[0] if present else 'no'} model)")
    formula = f"{outcome} ~ {' + '.join(terms) or '1'} + (1 | {GROUP})"
    return Design(frame, formula, factors, scaling, sds, dropped, int((~complete).sum()))


# --------------------------------------------------------------------------------------------
# Fitting the specifications


def _covariate_of(term: str, design: Design) -> str:
    if term == "(Intercept)":
        return term
    if term.startswith("model") and term not in design.scaling:
        return "model"
    return base_name(term)


def _label(covariate: str, term: str, sources: Mapping[str, str]) -> str:
    label = LABELS.get(covariate, covariate)
    if covariate == "model":
        return f"{label}: {term.removeprefix('model')}"
    if covariate in sources:
        label = f"{label} ({sources[covariate]})"
    return label


def coefficient_table(
    fit: LmerFit,
    design: Design,
    spec: Spec,
    *,
    formulation: str,
    fdr_alpha: float,
    confidence: float,
    sources: Mapping[str, str],
) -> pd.DataFrame:
    """The fit's fixed effects with BH-adjusted p-values and confidence intervals.

    ``p_fdr``: Benjamini–Hochberg over every coefficient but the intercept (NaN for it);
    ``ci_low``/``ci_high``: estimate ± t quantile (Satterthwaite df) × SE at ``confidence``;
    ``significant_fdr``: ``p_fdr < fdr_alpha``.
    """
    table = fit.coefficients.copy()
    table["covariate"] = [_covariate_of(t, design) for t in table["term"]]
    table["label"] = [
        _label(c, t, sources) for c, t in zip(table["covariate"], table["term"], strict=True)
    ]
    table["role"] = np.select(
        [
            table["term"] == "(Intercept)",
            table["covariate"].isin(["model", "nll_base"]),
        ],
        ["intercept", "control"],
        default="covariate",
    )
    table["scaling"] = [
        design.scaling.get(t, design.scaling.get(c, ""))
        for t, c in zip(table["term"], table["covariate"], strict=True)
    ]
    table["predictor_sd"] = [design.predictor_sd.get(t, np.nan) for t in table["term"]]
    family = (table["role"] != "intercept") & table["p"].notna()
    table["p_fdr"] = np.nan
    if family.any():
        table.loc[family, "p_fdr"] = stats.false_discovery_control(
            table.loc[family, "p"].to_numpy(), method="bh"
        )
    quantile = stats.t.ppf(0.5 + confidence / 2, table["df"].to_numpy(dtype=float))
    table["ci_low"] = table["estimate"] - quantile * table["se"]
    table["ci_high"] = table["estimate"] + quantile * table["se"]
    table["significant_fdr"] = table["p_fdr"] < fdr_alpha
    table["spec"], table["kind"], table["history"] = spec.name, spec.kind, spec.history
    table["formulation"] = formulation
    table["n_obs"], table["n_stories"] = fit.n_obs, fit.n_groups
    return table[COEFFICIENT_COLUMNS]


def _sources(covariates: pd.DataFrame) -> dict[str, str]:
    """Tool names of the covariates that come from substitutes (for the labels)."""
    out = {}
    for covariate, column in SOURCE_COLUMNS.items():
        if column in covariates and len(covariates):
            out[covariate] = ", ".join(sorted(covariates[column].dropna().astype(str).unique()))
    return out


def fit_specifications(
    sequentiality: pd.DataFrame,
    covariates: pd.DataFrame,
    specs: Sequence[Spec],
    *,
    models: Sequence[str],
    formulation: str,
    fdr_alpha: float,
    confidence: float,
    skipped: Mapping[str, str] | None = None,
    story_covariates: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fit every specification; return (coefficients, diagnostics).

    Args:
        sequentiality: Sentence-level sequentiality of all models (concatenated).
        covariates: The corpus's covariate table.
        specs: The specifications to fit.
        models: Model names in config order (the first present one is the reference level).
        formulation: "context" (docs/method.md §7) or "topic".
        fdr_alpha: Level of ``significant_fdr``.
        confidence: Level of the confidence intervals.
        skipped: Specifications not fitted, with the reason (a diagnostics row each).
        story_covariates: Optional story-level covariates (see :func:`regression_rows`).

    Returns:
        ``coefficients`` (:data:`COEFFICIENT_COLUMNS`, all specifications) and ``diagnostics``
        (:data:`DIAGNOSTIC_COLUMNS`, one row per specification, fitted or skipped).
    """
    versions = check_r()
    sources = _sources(covariates)
    tables, diagnostics = [], []
    for spec in specs:
        design, fit, counts = _fit_spec(
            spec,
            sequentiality,
            covariates,
            models=models,
            formulation=formulation,
            story_covariates=story_covariates,
        )
        tables.append(
            coefficient_table(
                fit,
                design,
                spec,
                formulation=formulation,
                fdr_alpha=fdr_alpha,
                confidence=confidence,
                sources=sources,
            )
        )
        diagnostics.append(_fitted_diagnostics(spec, design, fit, counts, formulation, versions))
    for name, reason in (skipped or {}).items():
        diagnostics.append(_skipped_diagnostics(name, reason, formulation, versions))
    if not tables:
        return pd.DataFrame(columns=COEFFICIENT_COLUMNS), _diagnostics_table(diagnostics)
    return pd.concat(tables, ignore_index=True), _diagnostics_table(diagnostics)


def _fit_spec(
    spec: Spec,
    sequentiality: pd.DataFrame,
    covariates: pd.DataFrame,
    *,
    models: Sequence[str],
    formulation: str,
    story_covariates: pd.DataFrame | None,
) -> tuple[Design, LmerFit, dict[str, int]]:
    """One specification's design (:func:`regression_rows`, :func:`build_design`), its mixed
    model fitted in R (R's warnings, convergence notes and messages logged) and the row counts
    of :func:`regression_rows`; arguments as :func:`fit_specifications`'."""
    rows, counts = regression_rows(
        sequentiality,
        covariates,
        formulation=formulation,
        history=spec.history,
        story_covariates=story_covariates,
    )
    design = build_design(rows, spec, models)
    log.info(
        "%s: %d rows (%d first sentences without history left out), formula %s",
        spec.name,
        len(design.frame),
        counts["n_first_sentences_dropped"],
        design.formula,
    )
    fit = fit_lmer(design.frame, design.formula, design.factors)
    for text in [*fit.warnings, *fit.convergence]:
        log.warning("%s: R warning: %s", spec.name, text)
    for text in fit.messages:
        log.warning("%s: R message: %s", spec.name, text)
    return design, fit, counts


def _skipped_diagnostics(
    name: str, reason: str, formulation: str, versions: Mapping[str, str]
) -> dict[str, object]:
    """The diagnostics row of a specification not fitted, with the reason (logged)."""
    log.warning("%s not fitted: %s", name, reason)
    spec = Spec.parse(name)
    return {
        "spec": name,
        "kind": spec.kind,
        "history": spec.history,
        "formulation": formulation,
        "status": f"skipped: {reason}",
        **versions,
    }


def _diagnostics_table(diagnostics: Sequence[Mapping[str, object]]) -> pd.DataFrame:
    """The diagnostics rows as a :data:`DIAGNOSTIC_COLUMNS` frame (counts as nullable integers,
    the flags as nullable booleans: a skipped specification has none)."""
    diagnostics_table = pd.DataFrame(diagnostics).reindex(columns=DIAGNOSTIC_COLUMNS)
    return diagnostics_table.astype(
        {c: "Int64" for c in DIAGNOSTIC_COLUMNS if c.startswith("n_")}
        | {"singular": "boolean", "converged": "boolean"}
    )


def _fitted_diagnostics(
    spec: Spec,
    design: Design,
    fit: LmerFit,
    counts: Mapping[str, int],
    formulation: str,
    versions: Mapping[str, str],
) -> dict[str, object]:
    """The diagnostics row (:data:`DIAGNOSTIC_COLUMNS`) of a fitted specification: its formula,
    observations, stories and models, the rows left out (``counts``), what was dropped and why,
    R's warnings and messages, the fit's log-likelihood, AIC and random-effect SDs, and the
    versions of R and its packages."""
    return {
        "spec": spec.name,
        "kind": spec.kind,
        "history": spec.history,
        "formulation": formulation,
        "status": "fitted",
        "formula": design.formula,
        "n_obs": fit.n_obs,
        "n_stories": fit.n_groups,
        "n_models": len(design.factors.get("model", [])) or 1,
        **counts,
        "n_missing_dropped": design.n_missing_dropped,
        "dropped_predictors": "; ".join(
            design.dropped + [f"{c} (rank deficient)" for c in fit.dropped_columns]
        ),
        "singular": fit.singular,
        "converged": fit.converged,
        "convergence_messages": " | ".join(fit.convergence),
        "warnings": " | ".join(fit.warnings),
        "messages": " | ".join(fit.messages),
        "loglik": fit.loglik,
        "aic": fit.aic,
        "sd_story": fit.sd_story,
        "sd_residual": fit.sd_residual,
        **versions,
    }


def read_sequentiality(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Concatenate per-model sentence sequentiality tables (history kept as text)."""
    frame = tables.read_all(tables.SENTENCE_SEQUENTIALITY, paths)
    return frame.astype({"history": str, "story_id": str})


def story_covariates(scores: pd.DataFrame) -> pd.DataFrame:
    """The story-level covariates of the regressions: one row per story.

    ``scores``: the narrative-sense story scores (:data:`tables.PAIR_SCORES`,
    ``results/<corpus>/narrative_sense/story_scores.parquet``: read as a file, so that no measure
    imports another). ``narrative_sense`` = the story's ``median_pmi_top`` (median PMI, natural
    log, of its ``top_pairs`` highest-scoring lemma pairs; NaN for a story with fewer than 2
    recognized lemmas). Higher means the story's words are more strongly associated across the
    reference stories.
    """
    return pd.DataFrame(
        {
            "story_id": scores["story_id"].astype(str),
            "narrative_sense": scores["median_pmi_top"].astype(float),
        }
    )


def fit_corpus(
    sequentiality: Sequence[str | Path],
    covariates: str | Path,
    story_scores: Sequence[str | Path] | None,
    *,
    specs: Sequence[str],
    models: Sequence[str],
    formulation: str,
    fdr_alpha: float,
    confidence: float,
    skipped: Mapping[str, str],
) -> tuple[pd.DataFrame, pd.DataFrame, list[pd.DataFrame]]:
    """The regressions of one corpus (rule ``fit_regressions``).

    Args:
        sequentiality: The sentence sequentiality tables of every model
            (:func:`read_sequentiality`).
        covariates: The corpus's covariate table (parquet).
        story_scores: The narrative-sense story scores (the first file; :func:`story_covariates`)
            when that stage runs on this corpus; None or empty: sentence-level covariates only.
        specs: Specification names (:meth:`Spec.parse`), in output order.
        models, formulation, fdr_alpha, confidence, skipped: As :func:`fit_specifications`.

    Returns:
        ``(coefficients, diagnostics, per_spec)``: :func:`fit_specifications`'s tables and the
        coefficients of each specification of ``specs``, in its order.
    """
    scores = list(story_scores or [])
    story = story_covariates(tables.read(tables.PAIR_SCORES, scores[0])) if scores else None
    coefficients, diagnostics = fit_specifications(
        read_sequentiality(list(sequentiality)),
        pd.read_parquet(covariates),
        [Spec.parse(name) for name in specs],
        models=list(models),
        formulation=formulation,
        fdr_alpha=float(fdr_alpha),
        confidence=float(confidence),
        skipped=dict(skipped),
        story_covariates=story,
    )
    per_spec = [coefficients[coefficients["spec"] == name] for name in specs]
    return coefficients, diagnostics, per_spec


def read_coefficients(path: str | Path) -> pd.DataFrame:
    """Read a coefficient table written by the workflow (``history`` as text)."""
    frame = pd.read_csv(path, dtype={"history": str, "term": str, "spec": str})
    return tables.COEFFICIENTS.check(frame, path)
