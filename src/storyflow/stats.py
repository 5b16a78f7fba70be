"""Group statistics shared by the measures: two-group tests, contrasts and summaries.

Generic, on any scores:

- :func:`welch_t`: Welch's two-sample t-test; :func:`hedges_g`: Hedges' g with a confidence
  interval (positive t and g = group a higher);
- :data:`Group`, :func:`group_filters`, :func:`group_label`, :func:`contrast_members`: a
  contrast's two groups of stories as label filters (a story type for HIPPOCORPUS; genre and
  point of view for book passages; human vs LLM for HANNA), so every corpus and every measure
  shares one definition of "group a vs group b".

Used by tension (:mod:`storyflow.measures.tension.compare`: contrasts of curve measures),
fabula entropy (:mod:`storyflow.measures.fabula_entropy.compare`: g of original vs corrupted
stories) and the comparison of all measures (:mod:`storyflow.comparison.separation`: each
measure's g per contrast).

On story-level sequentiality tables (one row per story, model, formulation and history, from
:func:`storyflow.measures.sequentiality.scores.story_sequentiality`; ``docs/method.md``
section 5), for rules ``summarize_sequentiality`` and ``compute_effect_sizes``:

- :func:`read_story_tables`: the per-model tables, concatenated;
- :func:`summarize`: per group, the mean, SD and t-based confidence interval of ``seq``,
  ``nll_base`` and ``nll_context`` (nats/token), each story one observation;
- :func:`contrast_effects`: per contrast, Welch's t and Hedges' g of each of those measures;
- :func:`contrast_summary`: g per contrast pooled over every model × history cell.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.history import history_key

log = logging.getLogger(__name__)

#: The story-level sequentiality terms summarised and contrasted (nats/token): SEQ and its two
#: NLL terms (the unconditional and the contextual).
SCORE_TERMS = ("seq", "nll_base", "nll_context")
GROUP_KEY = ["model", "formulation", "history"]
SUMMARY_COLUMNS = tables.SUMMARY.names


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
    confidence: float,
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
        for c in ["story_id", "story_type", *GROUP_KEY, "n_sentences", *SCORE_TERMS]
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
        value_vars=list(SCORE_TERMS),
        var_name="measure",
        value_name="value",
    )


def _sort(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Sort by ``by``; history numerically ("full" last), measure in :data:`SCORE_TERMS` order."""
    measure_order = {m: i for i, m in enumerate(SCORE_TERMS)}
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


Group = str | Mapping[str, str | Sequence[str]]
"""One side of a contrast: a story type, or label filters ``{column: value or [values]}``."""


def group_filters(group: Group) -> dict[str, list[str]]:
    """The label filters of a contrast side; a bare string means ``{"story_type": [it]}``."""
    if isinstance(group, str):
        return {"story_type": [group]}
    return {str(c): [v] if isinstance(v, str) else [str(x) for x in v] for c, v in group.items()}


def group_label(contrast: Mapping[str, object], side: str) -> str:
    """Display name of side ``"a"`` or ``"b"``: ``label_a``/``label_b``, else its filters."""
    label = contrast.get(f"label_{side}")
    if label:
        return str(label)
    filters = group_filters(contrast[side])  # type: ignore[arg-type]
    if list(filters) == ["story_type"] and len(filters["story_type"]) == 1:
        return filters["story_type"][0]
    return ", ".join(f"{col}={'|'.join(values)}" for col, values in filters.items())


def contrast_members(
    labels: pd.DataFrame, contrasts: Sequence[Mapping[str, object]]
) -> dict[str, tuple[set[str], set[str]]]:
    """The story ids on each side of each contrast, by its label filters.

    Args:
        labels: One row per story: ``story_id`` and label columns (``story_type``, ``genre``, ...).
        contrasts: ``[{"name", "a", "b"}, ...]``, each side a :data:`Group`.

    Raises:
        StoryflowError: a filter names a column the stories lack or only values absent from
            it (a typo), or a story falls on both sides. A side whose filters are each met by
            some story but never together (no first-person fiction in a small sample) is
            empty, with a warning.
    """
    labels = labels.drop_duplicates("story_id").astype(str)
    members: dict[str, tuple[set[str], set[str]]] = {}
    for contrast in contrasts:
        name = contrast["name"]
        sides = []
        for side in ("a", "b"):
            mask = pd.Series(True, index=labels.index)
            for column, values in group_filters(contrast[side]).items():  # type: ignore[arg-type]
                if column not in labels.columns:
                    raise StoryflowError(
                        f"contrast {name!r}: group {side} filters on {column!r}, which the stories "
                        f"do not have; label columns: {sorted(labels.columns)} (check the "
                        "corpus's contrasts in the config)"
                    )
                present = sorted(labels[column].unique())
                absent = [v for v in values if v not in present]
                if len(absent) == len(values):
                    raise StoryflowError(
                        f"contrast {name!r} ({group_label(contrast, 'a')} vs "
                        f"{group_label(contrast, 'b')}): group {side} asks for {column} {absent}, "
                        f"absent from the data; values present: {present} (check the corpus's "
                        "contrasts in the config)"
                    )
                mask &= labels[column].isin(values)
            if not mask.any():
                log.warning(
                    "contrast %s: no story matches group %s (%s) in this sample; its "
                    "statistics are NaN",
                    name,
                    side,
                    group_label(contrast, side),
                )
            sides.append(set(labels.loc[mask, "story_id"]))
        both = sides[0] & sides[1]
        if both:
            raise StoryflowError(
                f"contrast {name!r}: {len(both)} stories fall in both groups (e.g. "
                f"{sorted(both)[:3]}); make the two groups' filters exclusive"
            )
        members[str(name)] = (sides[0], sides[1])
    return members


def contrast_effects(
    story_seq: pd.DataFrame,
    contrasts: Sequence[Mapping[str, object]],
    *,
    confidence: float,
    min_sentences: int,
    min_group_size: int,
    labels: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Welch's t-test and Hedges' g for each contrast "group a vs group b" of stories.

    Args:
        story_seq: Story-level table(s) (all models concatenated).
        contrasts: ``[{"name": ..., "a": group, "b": group}, ...]``; a group is a story type
            (``"imagined"``) or label filters (``{"genre": "fiction", "pov": "first"}``) over the
            columns of ``labels``; optional ``label_a``/``label_b`` name the groups.
        confidence: Level of the CI of g (normal approximation, see :func:`hedges_g`).
        min_sentences: Stories with fewer sentences are left out (their number is logged).
        labels: The corpus's story labels (one row per ``story_id``; e.g. its stories table).
            Defaults to ``story_seq``'s ``story_id`` and ``story_type``. A ``document_id``
            column (the book a passage comes from) is counted in ``n_docs_a``/``n_docs_b``.
        min_group_size: A contrast cell whose groups are not both this large (stories) is not
            tested: its sizes, means and SDs are reported, t, df, p and g are NaN and ``tested``
            is False (config ``stats.min_group_size``; at 2 vs 2 a g of 14 says nothing).

    Returns:
        ``model, formulation, history, contrast, group_a, group_b, measure, n_a, n_b, n_docs_a,
        n_docs_b, mean_a, mean_b, sd_a, sd_b, t, df, p, g, g_ci_low, g_ci_high, tested``, one
        row per model × formulation × history × contrast × measure. n = stories (passages),
        n_docs = distinct documents among them (= n without ``document_id``). Means and SDs
        (n − 1) in nats/token; t and g > 0 = group a higher. When a group has fewer than
        ``min_group_size`` stories in a cell, its test statistics are NaN (a warning is logged).

    Raises:
        StoryflowError: a contrast's group matches no story (see :func:`contrast_members`).
    """
    if labels is None:
        labels = story_seq[["story_id", "story_type"]]
    labels = labels.drop(columns=[c for c in ("text", "topic") if c in labels])  # not labels
    members = contrast_members(labels, contrasts)
    labels = labels.drop_duplicates("story_id").astype({"story_id": str})
    long = _long_with_documents(story_seq, labels, min_sentences)
    cells = long[[*GROUP_KEY, "measure"]].drop_duplicates().itertuples(index=False, name=None)
    grouped = _group_values(long, contrasts, members)
    rows: list[dict[str, object]] = []
    small: dict[tuple[str, str, str, str], set[str]] = {}
    empty = (np.array([], dtype=float), 0)
    for model, formulation, history, measure in cells:
        key = (model, formulation, history, measure)
        for contrast in contrasts:
            name = str(contrast["name"])
            row = _effect_row(
                contrast, key, grouped[name, "a"].get(key, empty),
                grouped[name, "b"].get(key, empty), confidence, min_group_size,
            )  # fmt: skip
            if not row["tested"]:
                small.setdefault((name, model, formulation, measure), set()).add(history)
            rows.append(row)
    _warn_untested(small, min_group_size)
    return _effects_table(rows, contrasts)


def _long_with_documents(
    story_seq: pd.DataFrame, labels: pd.DataFrame, min_sentences: int
) -> pd.DataFrame:
    """The stories of at least ``min_sentences`` sentences in long form (:func:`_long`), each
    row with its story's ``document_id`` from ``labels`` (one row per story; the story itself
    when ``labels`` has no ``document_id``)."""
    ids = labels["story_id"]
    docs = pd.Series(
        labels["document_id"].to_numpy() if "document_id" in labels else ids.to_numpy(), index=ids
    )
    kept = _filter_stories(story_seq, min_sentences)
    long = _long(kept).astype({"story_id": str})
    long["document_id"] = long["story_id"].map(docs.astype(str))
    return long


def _effects_table(
    rows: Sequence[Mapping[str, object]], contrasts: Sequence[Mapping[str, object]]
) -> pd.DataFrame:
    """The effect rows as a frame of :data:`storyflow.tables.EFFECTS` (each record checked
    against its columns), sorted by model, formulation, history, the contrasts' configured
    order and measure; counts as int, ``tested`` as bool."""
    effects = tables.EFFECTS.partial(rows)
    order = {c["name"]: i for i, c in enumerate(contrasts)}
    effects = effects.assign(_c=effects["contrast"].map(order))
    effects = _sort(effects, [*GROUP_KEY, "_c", "measure"]).drop(columns="_c")
    types = {"n_a": int, "n_b": int, "n_docs_a": int, "n_docs_b": int, "tested": bool}
    return effects.astype(types)


def _group_values(
    long: pd.DataFrame,
    contrasts: Sequence[Mapping[str, object]],
    members: Mapping[str, tuple[set[str], set[str]]],
) -> dict[tuple[object, str], dict[tuple[Any, ...], tuple[np.ndarray, int]]]:
    """Per (contrast, side a or b) and cell (model, formulation, history, measure): the
    group's story values (nats/token) and its number of distinct documents."""
    grouped = {}
    for contrast in contrasts:
        for side, ids in zip("ab", members[str(contrast["name"])], strict=True):
            sub = long[long["story_id"].isin(ids)]
            grouped[contrast["name"], side] = {
                key: (grp["value"].to_numpy(dtype=float), grp["document_id"].nunique())
                for key, grp in sub.groupby([*GROUP_KEY, "measure"], sort=False)
            }
    return grouped


def _effect_row(
    contrast: Mapping[str, object],
    key: tuple[Any, ...],
    group_a: tuple[np.ndarray, int],
    group_b: tuple[np.ndarray, int],
    confidence: float,
    min_group_size: int,
) -> dict[str, object]:
    """One contrast in one cell ``key`` (model, formulation, history, measure): sizes, means
    and SDs of both groups (values and distinct documents), and Welch's t with Hedges' g when
    both have ``min_group_size`` stories (else NaN, ``tested`` False)."""
    (a, docs_a), (b, docs_b) = group_a, group_b
    model, formulation, history, measure = key
    row: dict[str, object] = {
        "model": model,
        "formulation": formulation,
        "history": history,
        "contrast": str(contrast["name"]),
        "group_a": group_label(contrast, "a"),
        "group_b": group_label(contrast, "b"),
        "measure": measure,
        "n_a": a.size,
        "n_b": b.size,
        "n_docs_a": docs_a,
        "n_docs_b": docs_b,
        "mean_a": a.mean() if a.size else math.nan,
        "mean_b": b.mean() if b.size else math.nan,
        "sd_a": a.std(ddof=1) if a.size > 1 else math.nan,
        "sd_b": b.std(ddof=1) if b.size > 1 else math.nan,
    }
    row["tested"] = a.size >= max(2, min_group_size) and b.size >= max(2, min_group_size)
    if not row["tested"]:
        row.update(dict.fromkeys(["t", "df", "p", "g", "g_ci_low", "g_ci_high"], math.nan))
    else:
        row["t"], row["df"], row["p"] = welch_t(a, b)
        row["g"], row["g_ci_low"], row["g_ci_high"] = hedges_g(a, b, confidence)
    return row


def _warn_untested(small: Mapping[tuple[str, str, str, str], set[str]], minimum: int) -> None:
    """One warning per contrast, model and formulation whose groups were too small to test at
    some history sizes (the measures share their stories: said once, for the first)."""
    for (name, model, formulation, measure), histories in small.items():
        if measure != SCORE_TERMS[0]:
            continue
        log.warning(
            "contrast %s, model %s, formulation %s: a group has fewer than %d stories at "
            "history %s: not tested (t, p and g NaN; stats.min_group_size)",
            name,
            model,
            formulation,
            max(2, minimum),
            ", ".join(sorted(histories, key=history_key)),
        )


def contrast_summary(effects: pd.DataFrame) -> pd.DataFrame:
    """Hedges' g of each contrast pooled over every model × history cell.

    Not the contrast's answer: that is the paper's aggregate (each model's median g over
    h = 1..H, then the mean over models) in ``contrast_answers.csv``
    (:mod:`storyflow.contrast_answers.answers`). These numbers pool every cell alike, the full
    history included, hence their ``cell_`` names.

    Args:
        effects: The table of :func:`contrast_effects`.

    Returns:
        ``contrast, group_a, group_b, formulation, measure, n_models, n_histories,
        cell_mean_g, cell_min_g, cell_max_g, share_positive, n_a, n_b, n_docs_a, n_docs_b``: g
        unitless (positive = group a higher), ``share_positive`` the fraction of model ×
        history cells with g > 0, the group sizes (stories/passages and documents/books) their
        largest value over cells.
    """
    valid = effects.dropna(subset=["g"])
    keys = ["contrast", "group_a", "group_b", "formulation", "measure"]
    summary = (
        valid.groupby(keys, sort=False)
        .agg(
            n_models=("model", "nunique"),
            n_histories=("history", "nunique"),
            cell_mean_g=("g", "mean"),
            cell_min_g=("g", "min"),
            cell_max_g=("g", "max"),
            share_positive=("g", lambda g: float((g > 0).mean())),
            n_a=("n_a", "max"),
            n_b=("n_b", "max"),
            n_docs_a=("n_docs_a", "max"),
            n_docs_b=("n_docs_b", "max"),
        )
        .reset_index()
    )
    measure_order = {m: i for i, m in enumerate(SCORE_TERMS)}
    return (
        summary.assign(_m=summary["measure"].map(measure_order))
        .sort_values(["formulation", "_m"], kind="stable")
        .drop(columns="_m")
        .reset_index(drop=True)
    )


def read_story_tables(paths: str | Path | Sequence[str | Path]) -> pd.DataFrame:
    """Concatenate per-model story-level Parquet tables (one path or several)."""
    return tables.read_all(tables.STORY_SEQUENTIALITY, paths).astype({"history": str})
