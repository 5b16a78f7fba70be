"""Group statistics of story-level sequentiality (``docs/method.md`` section 5).

Inputs are story-level tables from :func:`storyflow.sequentiality.story_sequentiality`: one row
per (story, model, formulation, history) with the measures ``seq``, ``nll_base`` and
``nll_context`` in nats/token. Each story is one observation.

- :func:`summarize`: per group, the mean, SD and t-based confidence interval of each measure.
- :func:`contrast_effects`: per contrast "a vs b", Welch's t-test and Hedges' g with a
  confidence interval; positive t and g = group a higher (for ``seq``: a more sequential).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from storyflow.errors import StoryflowError
from storyflow.history import history_key

log = logging.getLogger(__name__)

MEASURES = ("seq", "nll_base", "nll_context")
GROUP_KEY = ["model", "formulation", "history"]
SUMMARY_COLUMNS = [
    "model",
    "formulation",
    "history",
    "story_type",
    "measure",
    "n",
    "mean",
    "sd",
    "ci_low",
    "ci_high",
]
EFFECT_COLUMNS = [
    "model",
    "formulation",
    "history",
    "contrast",
    "group_a",
    "group_b",
    "measure",
    "n_a",
    "n_b",
    "mean_a",
    "mean_b",
    "t",
    "df",
    "p",
    "g",
    "g_ci_low",
    "g_ci_high",
]
TEXT_COLUMNS = ("model", "formulation", "history", "story_type", "measure", "contrast")
TEXT_COLUMNS += ("group_a", "group_b", "story_id")


def _as_array(values: Sequence[float] | np.ndarray | pd.Series, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if arr.size < 2:
        raise ValueError(f"{name} needs at least 2 values, got {arr.size}")
    return arr


def welch_t(
    a: Sequence[float] | np.ndarray | pd.Series, b: Sequence[float] | np.ndarray | pd.Series
) -> tuple[float, float, float]:
    """Welch's two-sample t-test (unequal variances), two-sided.

    Uses :func:`scipy.stats.ttest_ind` with ``equal_var=False``; the degrees of freedom are the
    Welch–Satterthwaite value reported by scipy:
    df = (v_a/n_a + v_b/n_b)² / ((v_a/n_a)²/(n_a−1) + (v_b/n_b)²/(n_b−1)), v = sample variance.

    Returns:
        ``(t, df, p)``; t > 0 when mean(a) > mean(b). NaN when both groups have zero variance.

    Raises:
        ValueError: a group has fewer than 2 values or contains NaN.
    """
    x = _as_array(a, "a")
    y = _as_array(b, "b")
    if x.var() == 0 and y.var() == 0:
        return math.nan, math.nan, math.nan
    res = sps.ttest_ind(x, y, equal_var=False)
    return float(res.statistic), float(res.df), float(res.pvalue)


def hedges_g(
    a: Sequence[float] | np.ndarray | pd.Series,
    b: Sequence[float] | np.ndarray | pd.Series,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Hedges' g (bias-corrected standardized mean difference) with a normal-approximation CI.

    Formula (Hedges & Olkin 1985; sample variances v with n − 1 denominators)::

        s_p = sqrt(((n_a − 1) v_a + (n_b − 1) v_b) / (n_a + n_b − 2))     pooled SD
        d   = (mean_a − mean_b) / s_p                                     Cohen's d
        J   = 1 − 3 / (4 (n_a + n_b) − 9)                                 approximate correction
        g   = J d
        SE  = sqrt((n_a + n_b) / (n_a n_b) + g² / (2 (n_a + n_b)))
        CI  = g ± z_{(1 + confidence)/2} SE

    J is the usual approximation 1 − 3/(4·df − 1) with df = n_a + n_b − 2 (not the exact gamma
    form; the two differ by < 0.1 % from n_a + n_b = 10 on).

    Returns:
        ``(g, ci_low, ci_high)``, unitless; g > 0 when mean(a) > mean(b). NaN when both groups
        have zero variance.

    Raises:
        ValueError: a group has fewer than 2 values or contains NaN, or ``confidence`` is not
            in (0, 1).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x = _as_array(a, "a")
    y = _as_array(b, "b")
    n_a, n_b = x.size, y.size
    pooled_var = ((n_a - 1) * x.var(ddof=1) + (n_b - 1) * y.var(ddof=1)) / (n_a + n_b - 2)
    if pooled_var <= 0:
        return math.nan, math.nan, math.nan
    d = (x.mean() - y.mean()) / math.sqrt(pooled_var)
    j = 1 - 3 / (4 * (n_a + n_b) - 9)
    g = j * d
    se = math.sqrt((n_a + n_b) / (n_a * n_b) + g**2 / (2 * (n_a + n_b)))
    z = float(sps.norm.ppf((1 + confidence) / 2))
    return float(g), float(g - z * se), float(g + z * se)


def _filter_stories(story_seq: pd.DataFrame, min_sentences: int) -> pd.DataFrame:
    """Drop stories with fewer than ``min_sentences`` sentences (logged)."""
    missing = [
        c
        for c in ["story_id", "story_type", *GROUP_KEY, "n_sentences", *MEASURES]
        if c not in story_seq.columns
    ]
    if missing:
        raise ValueError(f"story table lacks columns {missing}")
    story_seq = story_seq.astype({"history": str})
    short = story_seq["n_sentences"] < min_sentences
    n_short = story_seq.loc[short, "story_id"].nunique()
    if n_short:
        log.info(
            "left out %d of %d stories with fewer than %d sentences",
            n_short,
            story_seq["story_id"].nunique(),
            min_sentences,
        )
    kept = story_seq[~short]
    if kept.empty:
        raise StoryflowError(
            f"no story has at least {min_sentences} sentences (stats.min_sentences); "
            f"nothing to summarize"
        )
    return kept


def _long(story_seq: pd.DataFrame) -> pd.DataFrame:
    """One row per story × measure: key columns, ``story_type``, ``measure``, ``value``."""
    return story_seq.melt(
        id_vars=[*GROUP_KEY, "story_type", "story_id"],
        value_vars=list(MEASURES),
        var_name="measure",
        value_name="value",
    )


def _sort(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Sort by ``by``; history numerically ("full" last), measure in :data:`MEASURES` order."""
    measure_order = {m: i for i, m in enumerate(MEASURES)}
    helpers = {
        "_history": df["history"].map(history_key),
        "_measure": df["measure"].map(measure_order),
    }
    sort_by = [f"_{c}" if f"_{c}" in helpers else c for c in by]
    return (
        df.assign(**helpers)
        .sort_values(sort_by, kind="stable")
        .drop(columns=list(helpers))
        .reset_index(drop=True)
    )


def summarize(story_seq: pd.DataFrame, *, confidence: float, min_sentences: int) -> pd.DataFrame:
    """Mean, SD and t-based confidence interval of each measure per group of stories.

    Args:
        story_seq: Story-level table(s) (all models concatenated).
        confidence: Level of the interval (e.g. 0.95).
        min_sentences: Stories with fewer sentences are left out (their number is logged).

    Returns:
        ``model, formulation, history, story_type, measure, n, mean, sd, ci_low, ci_high``, one
        row per model × formulation × history × story_type × measure (``seq``, ``nll_base``,
        ``nll_context``). Values in nats/token; ``sd`` uses n − 1; the interval is
        mean ± t_{(1+confidence)/2, n−1} · sd / sqrt(n) (NaN when n < 2).
    """
    kept = _filter_stories(story_seq, min_sentences)
    summary = (
        _long(kept)
        .groupby([*GROUP_KEY, "story_type", "measure"], sort=False)["value"]
        .agg(n="count", mean="mean", sd="std")
        .reset_index()
    )
    n = summary["n"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        t_crit = sps.t.ppf((1 + confidence) / 2, np.where(n > 1, n - 1, np.nan))
        half = t_crit * summary["sd"].to_numpy() / np.sqrt(n)
    summary["ci_low"] = summary["mean"] - half
    summary["ci_high"] = summary["mean"] + half
    summary["n"] = summary["n"].astype(int)
    return _sort(summary[SUMMARY_COLUMNS], [*GROUP_KEY, "story_type", "measure"])


def _check_contrasts(contrasts: Sequence[Mapping[str, str]], present: list[str]) -> None:
    for contrast in contrasts:
        missing = [contrast[k] for k in ("a", "b") if contrast[k] not in present]
        if missing:
            raise StoryflowError(
                f"contrast {contrast['name']!r} ({contrast['a']} vs {contrast['b']}) names "
                f"story type(s) {missing} absent from the data; story types present: {present} "
                f"(check stats.contrasts in the config)"
            )


def contrast_effects(
    story_seq: pd.DataFrame,
    contrasts: Sequence[Mapping[str, str]],
    *,
    confidence: float,
    min_sentences: int,
) -> pd.DataFrame:
    """Welch's t-test and Hedges' g for each contrast "a vs b" of story types.

    Args:
        story_seq: Story-level table(s) (all models concatenated).
        contrasts: ``[{"name": ..., "a": story_type, "b": story_type}, ...]``.
        confidence: Level of the CI of g (normal approximation, see :func:`hedges_g`).
        min_sentences: Stories with fewer sentences are left out (their number is logged).

    Returns:
        ``model, formulation, history, contrast, group_a, group_b, measure, n_a, n_b, mean_a,
        mean_b, t, df, p, g, g_ci_low, g_ci_high``, one row per model × formulation × history ×
        contrast × measure. Means in nats/token; t and g > 0 = group a higher. When a group has
        fewer than 2 stories in a cell, its statistics are NaN (a warning is logged).

    Raises:
        StoryflowError: a contrast names a story type absent from ``story_seq``.
    """
    present = sorted(story_seq["story_type"].astype(str).unique())
    _check_contrasts(contrasts, present)
    kept = _filter_stories(story_seq, min_sentences)
    long = _long(kept)
    values = {
        key: grp["value"].to_numpy(dtype=float)
        for key, grp in long.groupby([*GROUP_KEY, "measure", "story_type"], sort=False)
    }
    cells = long[[*GROUP_KEY, "measure"]].drop_duplicates().itertuples(index=False, name=None)
    rows: list[dict[str, object]] = []
    small: dict[tuple[str, str, str, str], set[str]] = {}
    empty = np.array([], dtype=float)
    for model, formulation, history, measure in cells:
        for contrast in contrasts:
            a = values.get((model, formulation, history, measure, contrast["a"]), empty)
            b = values.get((model, formulation, history, measure, contrast["b"]), empty)
            row: dict[str, object] = {
                "model": model,
                "formulation": formulation,
                "history": history,
                "contrast": contrast["name"],
                "group_a": contrast["a"],
                "group_b": contrast["b"],
                "measure": measure,
                "n_a": a.size,
                "n_b": b.size,
                "mean_a": a.mean() if a.size else math.nan,
                "mean_b": b.mean() if b.size else math.nan,
            }
            if a.size < 2 or b.size < 2:
                row.update(dict.fromkeys(["t", "df", "p", "g", "g_ci_low", "g_ci_high"], math.nan))
                small.setdefault((contrast["name"], model, formulation, measure), set()).add(
                    history
                )
            else:
                row["t"], row["df"], row["p"] = welch_t(a, b)
                row["g"], row["g_ci_low"], row["g_ci_high"] = hedges_g(a, b, confidence)
            rows.append(row)
    for (name, model, formulation, measure), histories in small.items():
        if measure != MEASURES[0]:
            continue  # the measures share their stories: warn once per cell
        log.warning(
            "contrast %s, model %s, formulation %s: a group has fewer than 2 stories at "
            "history %s; its statistics are NaN",
            name,
            model,
            formulation,
            ", ".join(sorted(histories, key=history_key)),
        )
    effects = pd.DataFrame(rows, columns=EFFECT_COLUMNS)
    order = {c["name"]: i for i, c in enumerate(contrasts)}
    effects = effects.assign(_c=effects["contrast"].map(order))
    effects = _sort(effects, [*GROUP_KEY, "_c", "measure"]).drop(columns="_c")
    return effects.astype({"n_a": int, "n_b": int})


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV written by this module, keeping label columns (``history`` ...) as text."""
    header = pd.read_csv(path, nrows=0).columns
    return pd.read_csv(path, dtype={c: str for c in TEXT_COLUMNS if c in header})


def read_story_tables(paths: str | Path | Sequence[str | Path]) -> pd.DataFrame:
    """Concatenate per-model story-level Parquet tables (one path or several)."""
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    if not paths:
        raise StoryflowError("no story-level sequentiality tables were given")
    tables = [pd.read_parquet(p) for p in paths]
    return pd.concat(tables, ignore_index=True).astype({"history": str})
