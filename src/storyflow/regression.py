"""Mixed-effects regressions of sequentiality on coherence covariates (method.md §7).

For a formulation (``"context"`` by default: NLL_∅ and NLL_C∅) and a history size h, the rows
are the sentences of every story scored by every language model, joined with the covariates of
:mod:`storyflow.covariates` at window w = h. Two specifications per h:

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
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from storyflow.covariates import CONNECTIVE_COLUMNS, WINDOW_MEASURES
from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)

KINDS = ("gain", "raw")
GROUP = "story_id"
R_PACKAGES = ("lme4", "lmerTest")
RPY2_PINS = "rpy2==3.6.6 rpy2-robjects==3.6.6 rpy2-rinterface==3.6.5"
R_INSTALL_HINT = (
    "Install them: on Debian/Ubuntu (as root) `apt-get install -y --no-install-recommends "
    "r-base-core r-cran-lme4 r-cran-lmertest`; with conda (no root needed) run the workflow "
    "with `--software-deployment-method conda` (envs/regression.yaml) or `conda install -c "
    "conda-forge r-base r-lme4 r-lmertest`; elsewhere install R from https://cran.r-project.org "
    "and run `install.packages(c('lme4', 'lmerTest'))` in R. The Python side needs "
    f"`pip install {RPY2_PINS}`. Or switch the stage off with `regression: {{enabled: false}}`."
)
#: Window-free continuous covariates (z-scored) and 0/1 covariates (entered as they are).
CONTINUOUS_SENTENCE = ("n_tokens", "rare_word_rate", "clause_count", "tree_depth")
#: Story-level continuous covariates (z-scored; each of a story's sentences gets its story's
#: value), present when their table is given: the narrative-sense score
#: (:func:`storyflow.narrative_sense.story_covariates`).
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
COEFFICIENT_COLUMNS = [
    "spec",
    "kind",
    "history",
    "formulation",
    "term",
    "covariate",
    "label",
    "role",
    "scaling",
    "predictor_sd",
    "estimate",
    "se",
    "df",
    "t",
    "p",
    "p_fdr",
    "ci_low",
    "ci_high",
    "significant_fdr",
    "n_obs",
    "n_stories",
]
DIAGNOSTIC_COLUMNS = [
    "spec",
    "kind",
    "history",
    "formulation",
    "status",
    "formula",
    "n_obs",
    "n_stories",
    "n_models",
    "n_rows_scored",
    "n_first_sentences_dropped",
    "n_missing_dropped",
    "n_truncated_kept",
    "dropped_predictors",
    "singular",
    "converged",
    "convergence_messages",
    "warnings",
    "messages",
    "loglik",
    "aic",
    "sd_story",
    "sd_residual",
    "r_version",
    "lme4_version",
    "lmerTest_version",
]


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
# R through rpy2


def _missing_r(what: str) -> StoryflowError:
    return StoryflowError(
        f"the regression stage fits lme4/lmerTest models in R through rpy2, but {what}. "
        + R_INSTALL_HINT
    )


def _import_robjects() -> Any:
    """``rpy2.robjects``, starting R (ABI mode: no compiler needed; quiet about API mode)."""
    os.environ.setdefault("RPY2_CFFI_MODE", "ABI")
    library_path = os.environ.get("LD_LIBRARY_PATH")
    import rpy2.robjects as ro

    # Starting R sets LD_LIBRARY_PATH (R's lib folder and /usr/lib/x86_64-linux-gnu) in this
    # process. R's libraries are loaded by then; keeping the setting would make any Python started
    # later from this process load the system's libpython instead of its own.
    if library_path is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = library_path
    return ro


def check_r() -> dict[str, str]:
    """Check that R, rpy2, lme4 and lmerTest are usable; return their versions.

    Raises:
        StoryflowError: one of them is missing; the message names it and how to install it.
    """
    if not os.environ.get("R_HOME") and shutil.which("R") is None:
        raise _missing_r("R is not installed (no `R` on PATH and R_HOME is not set)")
    try:
        ro = _import_robjects()
    except ImportError as err:
        raise _missing_r(f"the Python package rpy2 cannot be imported ({err})") from err
    except Exception as err:  # rpy2 raises various errors when libR cannot be loaded
        raise _missing_r(
            f"R could not be started through rpy2 ({type(err).__name__}: {err})"
        ) from err
    _route_r_console()
    installed = ro.r("function(p) nzchar(system.file(package = p))")
    missing = [p for p in R_PACKAGES if not installed(p)[0]]
    if missing:
        raise _missing_r(f"the R package(s) {', '.join(missing)} are not installed")
    versions = {"r_version": str(ro.r("R.version.string")[0])}
    for package in R_PACKAGES:
        versions[f"{package}_version"] = str(ro.r(f"as.character(packageVersion('{package}'))")[0])
    return versions


def _route_r_console() -> None:
    """Send what R prints to the log instead of stdout (rpy2's default)."""
    from rpy2.rinterface_lib import callbacks

    def write(text: str) -> None:
        if text.strip():
            log.info("R: %s", text.rstrip())

    def write_error(text: str) -> None:
        if text.strip():
            log.warning("R: %s", text.rstrip())

    callbacks.consolewrite_print = write
    callbacks.consolewrite_warnerror = write_error


# Runs one lmer fit collecting every warning and message (they are returned, never printed).
_R_FIT = r"""
function(data, formula) {
  warnings <- character(0)
  messages <- character(0)
  collect <- function(expr) withCallingHandlers(expr,
    warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    },
    message = function(m) {
      messages <<- c(messages, trimws(conditionMessage(m)))
      invokeRestart("muffleMessage")
    })
  fit <- collect(lmerTest::lmer(stats::as.formula(formula), data = data, REML = FALSE))
  coefs <- collect(if (inherits(fit, "lmerModLmerTest"))
    summary(fit, ddf = "Satterthwaite")$coefficients else summary(fit)$coefficients)
  conv <- fit@optinfo$conv$lme4$messages
  vc <- as.data.frame(lme4::VarCorr(fit))
  dropped <- attr(fit@pp$X, "col.dropped")
  list(
    terms = rownames(coefs),
    columns = colnames(coefs),
    coefs = as.numeric(coefs),
    nrow = nrow(coefs),
    warnings = as.character(warnings),
    messages = as.character(messages),
    convergence = if (is.null(conv)) character(0) else as.character(conv),
    optimizer_code = as.integer(fit@optinfo$conv$opt),
    singular = lme4::isSingular(fit),
    nobs = as.integer(stats::nobs(fit)),
    ngroups = as.integer(lme4::ngrps(fit)[["story_id"]]),
    loglik = as.numeric(stats::logLik(fit)),
    aic = stats::AIC(fit),
    sd_story = vc$sdcor[vc$grp == "story_id"],
    sd_residual = vc$sdcor[vc$grp == "Residual"],
    dropped = if (is.null(dropped)) character(0) else names(dropped)
  )
}
"""


@dataclass
class LmerFit:
    """Result of :func:`fit_lmer`.

    ``coefficients`` has one row per fixed effect (``term`` as R names it) with ``estimate``,
    ``se`` (standard error), ``df`` (Satterthwaite), ``t`` and ``p`` (two-sided); the other
    fields are what R reported (``converged`` is False when lme4 raised a convergence message or
    the optimizer returned a non-zero code; ``singular`` is lme4's ``isSingular``).
    """

    coefficients: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    convergence: list[str] = field(default_factory=list)
    converged: bool = True
    singular: bool = False
    n_obs: int = 0
    n_groups: int = 0
    loglik: float = float("nan")
    aic: float = float("nan")
    sd_story: float = float("nan")
    sd_residual: float = float("nan")
    dropped_columns: list[str] = field(default_factory=list)


def _to_r_frame(frame: pd.DataFrame, factors: Mapping[str, Sequence[str]]) -> Any:
    """An R data.frame: numeric columns as doubles, ``factors`` (column → levels) as factors."""
    ro = _import_robjects()
    columns: dict[str, Any] = {}
    for name in frame.columns:
        if name in factors:
            columns[name] = ro.FactorVector(
                ro.StrVector(frame[name].astype(str).tolist()),
                levels=ro.StrVector(list(factors[name])),
            )
        else:
            columns[name] = ro.FloatVector(frame[name].to_numpy(dtype=float))
    return ro.DataFrame(columns)


def fit_lmer(frame: pd.DataFrame, formula: str, factors: Mapping[str, Sequence[str]]) -> LmerFit:
    """Fit ``formula`` by ML with ``lmerTest::lmer(REML = FALSE)`` (call :func:`check_r` first).

    Args:
        frame: Every column the formula uses; ``story_id`` and the columns in ``factors`` are
            turned into R factors, the others must be numeric.
        formula: An lme4 formula, e.g. ``"y ~ x + (1 | story_id)"``.
        factors: Factor columns and their levels (the first level is the reference).

    Raises:
        StoryflowError: R stopped with an error (its message is included).
    """
    ro = _import_robjects()
    from rpy2.rinterface_lib.embedded import RRuntimeError

    fit_function = ro.r(_R_FIT)
    try:
        result = fit_function(_to_r_frame(frame, factors), formula)
    except RRuntimeError as err:
        raise StoryflowError(f"lmer could not fit {formula!r}: {err}") from err
    get = result.rx2
    nrow = int(get("nrow")[0])
    values = np.asarray(list(get("coefs")), dtype=float).reshape(-1, nrow).T
    r_columns = list(get("columns"))
    names = {
        "Estimate": "estimate",
        "Std. Error": "se",
        "df": "df",
        "t value": "t",
        "Pr(>|t|)": "p",
    }
    coefs = pd.DataFrame(values, columns=[names.get(c, c) for c in r_columns])
    for column in ("df", "p"):
        if column not in coefs:
            coefs[column] = np.nan
    coefs.insert(0, "term", list(get("terms")))
    # lme4 lists a singular fit among its convergence messages; it is reported as ``singular``
    # (and its message in ``messages``), so it does not count as a convergence failure here.
    convergence = [m for m in get("convergence") if not m.startswith("boundary (singular) fit")]
    return LmerFit(
        coefficients=coefs[["term", "estimate", "se", "df", "t", "p"]],
        warnings=list(get("warnings")),
        messages=list(get("messages")),
        convergence=convergence,
        converged=not convergence and int(get("optimizer_code")[0]) == 0,
        singular=bool(get("singular")[0]),
        n_obs=int(get("nobs")[0]),
        n_groups=int(get("ngroups")[0]),
        loglik=float(get("loglik")[0]),
        aic=float(get("aic")[0]),
        sd_story=float(get("sd_story")[0]),
        sd_residual=float(get("sd_residual")[0]),
        dropped_columns=list(get("dropped")),
    )


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
        sequentiality: Sentence-level tables of all models (``storyflow.sequentiality``).
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
    keys = ["story_id", "sentence_idx"]
    rows = seq.merge(covariates, on=keys, how="left", validate="many_to_one", indicator=True)
    lacking = rows[rows["_merge"] != "both"]
    if len(lacking):
        example = lacking[keys].drop_duplicates().head(3).to_dict(orient="records")
        raise StoryflowError(
            f"{len(lacking)} sequentiality rows have no covariates (e.g. {example}): the "
            "covariate table was computed from another sentence table; rerun the workflow"
        )
    rows = rows.drop(columns="_merge")
    if story_covariates is not None:
        story = story_covariates[["story_id", *CONTINUOUS_STORY]]
        absent = sorted(set(rows["story_id"]) - set(story["story_id"]))
        if absent:
            raise StoryflowError(
                f"{len(absent)} stories have no story-level covariates (e.g. {absent[:3]}): "
                "the story table was computed from another corpus; rerun the workflow"
            )
        # a story without a score (too few words) keeps NaN: build_design drops and counts it
        rows = rows.merge(story, on="story_id", how="left", validate="many_to_one")
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
    formulation: str = "context",
    fdr_alpha: float = 0.05,
    confidence: float = 0.95,
    skipped: Mapping[str, str] | None = None,
    story_covariates: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fit every specification; return (coefficients, diagnostics).

    Args:
        sequentiality: Sentence-level sequentiality of all models (concatenated).
        covariates: The corpus's covariate table.
        specs: The specifications to fit.
        models: Model names in config order (the first present one is the reference level).
        formulation: "context" (method.md §7) or "topic".
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
        diagnostics.append(
            {
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
        )
    for name, reason in (skipped or {}).items():
        spec = Spec.parse(name)
        log.warning("%s not fitted: %s", name, reason)
        diagnostics.append(
            {
                "spec": name,
                "kind": spec.kind,
                "history": spec.history,
                "formulation": formulation,
                "status": f"skipped: {reason}",
                **versions,
            }
        )
    coefficients = (
        pd.concat(tables, ignore_index=True)
        if tables
        else pd.DataFrame(columns=COEFFICIENT_COLUMNS)
    )
    diagnostics_table = pd.DataFrame(diagnostics).reindex(columns=DIAGNOSTIC_COLUMNS)
    return coefficients, diagnostics_table.astype(
        {c: "Int64" for c in DIAGNOSTIC_COLUMNS if c.startswith("n_")}
        | {"singular": "boolean", "converged": "boolean"}
    )


def read_sequentiality(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Concatenate per-model sentence sequentiality tables (history kept as text)."""
    if not paths:
        raise StoryflowError("no sentence-level sequentiality tables were given")
    frames = [pd.read_parquet(p) for p in paths]
    return pd.concat(frames, ignore_index=True).astype({"history": str, "story_id": str})


def read_coefficients(path: str | Path) -> pd.DataFrame:
    """Read a coefficient table written by the workflow (``history`` as text)."""
    return pd.read_csv(path, dtype={"history": str, "term": str, "spec": str})


# --------------------------------------------------------------------------------------------
# Figure

KIND_TITLES = {"gain": "gain: NLL∅ − NLL C∅", "raw": "raw: NLL C∅ | NLL∅"}


def plot_coefficients(
    coefficients: pd.DataFrame,
    paths: Sequence[str | Path],
    *,
    dpi: int,
    width_per_panel: float,
    height_per_row: float = 0.24,
) -> Any:
    """Forest plot: covariate estimates with confidence intervals, one panel per specification.

    Rows are the covariates (``role == "covariate"``; intercept, model and NLL∅ terms are in the
    tables only), x is the estimate (nats/token per SD for z-scored predictors, per unit for
    0/1 indicators). Filled markers: significant after Benjamini–Hochberg; open: not.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    data = coefficients[coefficients["role"] == "covariate"]
    if data.empty:
        raise StoryflowError("the coefficient table has no covariate rows to plot")
    specs = list(dict.fromkeys(data["spec"]))
    labels = list(dict.fromkeys(data["label"]))
    y = {label: len(labels) - 1 - i for i, label in enumerate(labels)}
    fig = Figure(
        figsize=(0.8 + width_per_panel * len(specs), 1.3 + height_per_row * len(labels)),
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(specs), sharey=True, squeeze=False)[0]
    for ax, spec in zip(axes, specs, strict=True):
        panel = data[data["spec"] == spec]
        first = panel.iloc[0]
        ax.axvline(0, color="0.4", linewidth=0.7, linestyle="--")
        for significant, face in ((True, "C0"), (False, "white")):
            part = panel[panel["significant_fdr"].astype(bool) == significant]
            ys = part["label"].map(y).to_numpy(dtype=float)
            est = part["estimate"].to_numpy(dtype=float)
            err = np.vstack(
                [
                    est - part["ci_low"].to_numpy(dtype=float),
                    part["ci_high"].to_numpy(dtype=float) - est,
                ]
            )
            ax.errorbar(
                est,
                ys,
                xerr=np.where(np.isfinite(err), err, 0.0),
                fmt="o",
                ms=3.5,
                color="C0",
                mfc=face,
                elinewidth=0.9,
                capsize=1.5,
                label="p_FDR < α" if significant else "not significant",
            )
        ax.set_title(
            f"{KIND_TITLES.get(first['kind'], first['kind'])}, h = {first['history']}\n"
            f"n = {int(first['n_obs'])}, stories = {int(first['n_stories'])}",
            fontsize=8,
        )
        ax.tick_params(labelsize=7)
        ax.grid(axis="x", color="0.9", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.set_xlabel("estimate (nats/token per SD or per indicator)", fontsize=7)
    axes[0].set_yticks(list(y.values()), list(y))
    axes[0].set_ylim(-0.7, len(labels) - 0.3)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        names,
        loc="outside lower center",
        ncols=2,
        fontsize=7,
        frameon=False,
        title="mixed-effects estimate with confidence interval (intercept, model and NLL∅ "
        "terms: see the tables)",
        title_fontsize=7,
    )
    for path in paths:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=dpi)
    return fig
