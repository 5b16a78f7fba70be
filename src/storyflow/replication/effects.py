"""Hedges' g aggregated the way Fiction Flows reports it, with a bootstrap over stories.

Fiction Flows summarises each model's effect sizes over history sizes first (the median of g
over h, its Tables A1, A2, A4, A5, A7; a single h = 0 value for the unconditional term), then
averages the models (its "Mean" column). :func:`aggregated_g` computes that statistic from the
story-level scores and a percentile interval by resampling with replacement within each group,
the same resample for every model and history (the models score the same stories). The unit
resampled is the paper's unit of observation: a story, or, where several passages come from
one book (the books corpus; ``fiction_flows.txt`` l. 208 counts books), the book with all its
passages, so that passages of one book are not taken for independent observations. Each g is
:func:`storyflow.stats.hedges_g`'s (pooled SD, the approximate small-sample correction),
computed for all resamples at once. This is the one interval not drawn by
:func:`storyflow.bootstrap.interval`: ``scipy.stats.bootstrap`` resamples observations, not
clusters within groups.

:func:`matched_g` is its twin for a blocked design (stories that share a block, such as a prompt
written to by each group, are matched): Lakens' (2013) g_av over the blocks that hold both groups,
its interval resampling whole blocks, so that a block's stories of both groups are drawn together.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

#: How a model's g values over history sizes become one number.
OVER_HISTORIES: dict[str, Callable[..., Any]] = {"median": np.nanmedian, "mean": np.nanmean}


@dataclass(frozen=True)
class AggregatedG:
    """value: the mean over models of each model's ``over_histories`` of g over h (unitless,
    positive = group a higher); ci: its percentile bootstrap interval; per_model: each model's
    own summary over h; n_a, n_b: stories of each group scored by every model; units_a,
    units_b: the resampled units (books, or the stories themselves) those stories belong to."""

    value: float
    ci: tuple[float, float]
    per_model: dict[str, float]
    n_a: int
    n_b: int
    units_a: int
    units_b: int


def books_of(labels: pd.DataFrame) -> dict[str, str]:
    """Each story's book (``document_id``) when a stories table has one, else {}: the clusters
    an interval over stories resamples whole (a book with all its passages)."""
    if "document_id" not in labels:
        return {}
    return dict(zip(labels["story_id"].astype(str), labels["document_id"].astype(str), strict=True))


def _g(weights_a: np.ndarray, weights_b: np.ndarray, x: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Hedges' g of every cell (columns of ``x``) for every weighting (rows of the weights):
    weights count how often each story (column of the weights) is drawn."""

    def moments(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = weights @ seen
        mean = (weights @ x) / n
        var = ((weights @ x**2) - n * mean**2) / (n - 1)
        return n, mean, var

    with np.errstate(divide="ignore", invalid="ignore"):
        n_a, mean_a, var_a = moments(weights_a)
        n_b, mean_b, var_b = moments(weights_b)
        pooled = ((n_a - 1) * var_a + (n_b - 1) * var_b) / (n_a + n_b - 2)
        j = 1 - 3 / (4 * (n_a + n_b) - 9)
        g = j * (mean_a - mean_b) / np.sqrt(pooled)
    return np.where((n_a >= 2) & (n_b >= 2) & (pooled > 0), g, np.nan)


def _draws(
    members: np.ndarray, units: np.ndarray, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """[resamples, stories] counts of a resample with replacement of the units (stories or
    books: ``units`` numbers each story's unit) that hold the ``members`` stories: a drawn unit
    brings every member story it holds, once per draw."""
    counts = np.zeros((resamples, members.size))
    drawn_units = np.unique(units[members])
    k = drawn_units.size
    if k:
        per_unit = rng.multinomial(k, np.full(k, 1 / k), size=resamples)  # [resamples, k]
        index = np.searchsorted(drawn_units, units[members])
        counts[:, members] = per_unit[:, index]
    return counts


def _score_grid(
    scores: pd.DataFrame, measure: str, models: Sequence[str], histories: Sequence[str]
) -> pd.DataFrame:
    """Story × (model, history) table of ``measure`` (nats/token), the columns in the order of
    ``models`` then ``histories`` (NaN where a story has no score)."""
    cells = [(m, h) for m in models for h in histories]
    return (
        scores[scores["model"].isin(models) & scores["history"].isin(histories)]
        .pivot_table(
            index="story_id", columns=["model", "history"], values=measure, aggfunc="first"
        )
        .reindex(columns=pd.MultiIndex.from_tuples(cells))
    )


def _unit_numbers(ids: Iterable[str], clusters: Mapping[str, str] | None) -> np.ndarray:
    """The bootstrap unit of each story (its cluster, a passage's book; None or a story not
    in ``clusters``: the story itself), numbered 0, 1, ... in sorted order of the units."""
    unit_of = clusters or {}
    _, units = np.unique([unit_of.get(i, f"story:{i}") for i in ids], return_inverse=True)
    return units


def _point(cells: np.ndarray, summarise: Callable[..., Any]) -> tuple[np.ndarray, float]:
    """Each model's summary over h of the point estimates ``cells`` [models, histories], and
    their mean over the models (NaN without a model)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a model with no g: NaN, said by callers
        per_model = summarise(cells, axis=1) if cells.size else np.zeros(0)
    return per_model, float(np.mean(per_model)) if len(per_model) else math.nan


def _resampled(draws: np.ndarray, summarise: Callable[..., Any]) -> np.ndarray:
    """The statistic of every resample ``draws`` [resamples, models, histories]: the mean over
    the models of each model's summary over h (NaN for a resample without a g)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return summarise(draws, axis=2).mean(axis=1)


def _percentile_ci(boot: np.ndarray, value: float, confidence: float) -> tuple[float, float]:
    """The percentile interval at ``confidence`` of the bootstrap values ``boot`` (NaN ones
    left out); (NaN, NaN) when ``value`` or every resample is NaN."""
    tail = (1 - confidence) / 2
    if math.isfinite(value) and np.isfinite(boot).any():
        return float(np.nanquantile(boot, tail)), float(np.nanquantile(boot, 1 - tail))
    return math.nan, math.nan


def _block_values(
    x: np.ndarray, seen: np.ndarray, members: np.ndarray, blocks: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """[blocks, cells] mean of each block's ``members`` stories (``blocks`` numbers each story's
    block 0..k-1, -1 for none) and whether any of them is scored there."""
    member = np.zeros((k, x.shape[0]))
    rows = np.flatnonzero(members & (blocks >= 0))
    member[blocks[rows], rows] = 1.0
    counts = member @ seen
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(counts > 0, (member @ x) / counts, 0.0)
    return means, counts > 0


def _complete_blocks(
    ids: pd.Index, in_a: np.ndarray, in_b: np.ndarray, blocks: Mapping[str, str]
) -> tuple[np.ndarray, int]:
    """Each story's complete block, numbered 0..k-1 in sorted order of the blocks that hold
    stories of both groups (-1: no block, or one without the other group), and k."""
    names = np.array([blocks.get(i) or "" for i in ids], dtype=object)
    both = sorted(set(names[in_a]) & set(names[in_b]) - {""})
    number = {name: i for i, name in enumerate(both)}
    return np.array([number.get(name, -1) for name in names]), len(both)


def _centred_grid(
    scores: pd.DataFrame,
    a: Collection[str],
    b: Collection[str],
    measure: str,
    models: Sequence[str],
    histories: Sequence[str],
) -> tuple[pd.Index, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The stories' cells (model x history) of ``measure``, each cell centred on its mean over
    the stories, 0 where unscored: the story ids, which are in group a and b, the centred values
    and where each was scored (1.0) or not (0.0)."""
    wide = _score_grid(scores, measure, models, histories)
    ids = wide.index.astype(str)
    x = wide.to_numpy(float)
    seen = np.isfinite(x).astype(float)
    x = np.where(seen > 0, x - np.nanmean(x, axis=0, keepdims=True), 0.0)
    return ids, ids.isin(list(a)), ids.isin(list(b)), x, seen


def _g_av(weights: np.ndarray, xa: np.ndarray, xb: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Lakens' (2013) g_av of every cell (columns) for every weighting of the blocks (rows of
    ``weights``): the mean of the matched differences over the mean of the two groups' SDs, times
    Hedges' correction J = 1 - 3 / (4 df - 1), df = blocks - 1 (``xa``, ``xb``: each block's
    value of group a and of group b; ``seen``: where both exist)."""
    n = weights @ seen
    with np.errstate(divide="ignore", invalid="ignore"):
        sds = []
        for x in (xa, xb):
            mean = (weights @ (x * seen)) / n
            sds.append(np.sqrt(np.maximum((weights @ (x**2 * seen) - n * mean**2) / (n - 1), 0)))
        diff = (weights @ ((xa - xb) * seen)) / n
        average_sd = (sds[0] + sds[1]) / 2
        g = (1 - 3 / (4 * (n - 1) - 1)) * diff / average_sd
    return np.where((n >= 2) & (average_sd > 0), g, np.nan)


def matched_g(
    scores: pd.DataFrame,
    a: Collection[str],
    b: Collection[str],
    *,
    blocks: Mapping[str, str],
    measure: str,
    models: Sequence[str],
    histories: Sequence[str],
    over_histories: str,
    confidence: float,
    resamples: int,
    seed: int,
) -> AggregatedG:
    """The paper's aggregate of an effect size for matched groups, with a block bootstrap.

    The stories of group a and of group b that share a block (``blocks``: story id -> block) are
    matched. Each block that holds both groups gives one value per group and cell (model x
    history): the mean of its stories of that group (one story each, in a paired design). The
    effect size of a cell is Lakens' (2013) g_av of those matched values (unitless, positive =
    group a higher): standardised by the groups' SDs, not by the SD of the differences (g_z), so
    that it is on the scale of the unmatched Hedges' g and of the papers' g, and only its
    interval reflects the design. Each model's summary over h and the mean over models are as in
    :func:`aggregated_g`; the percentile interval resamples the complete blocks with
    replacement. ``units_a`` = ``units_b`` = the complete blocks; ``n_a``, ``n_b``: the stories
    of each group in them scored by every model. Stories in no block, or in a block without the
    other group, are left out (they stay in the unmatched estimate beside this one).
    """
    summarise = OVER_HISTORIES[over_histories]
    ids, in_a, in_b, x, seen = _centred_grid(scores, a, b, measure, models, histories)
    block, k = _complete_blocks(ids, in_a, in_b, blocks)
    xa, seen_a = _block_values(x, seen, in_a, block, k)
    xb, seen_b = _block_values(x, seen, in_b, block, k)
    pair_seen = (seen_a & seen_b).astype(float)
    shape = (len(models), len(histories))
    point = _g_av(np.ones((1, k)), xa, xb, pair_seen).reshape(shape)
    per_model, value = _point(point, summarise)
    rng = np.random.default_rng(seed)
    weights = np.zeros((resamples, 0))
    if k:
        weights = rng.multinomial(k, np.full(k, 1 / k), size=resamples).astype(float)
    draws = _g_av(weights, xa, xb, pair_seen)
    boot = _resampled(draws.reshape(resamples, *shape), summarise)
    complete = seen.all(axis=1) & (block >= 0)
    return AggregatedG(
        value,
        _percentile_ci(boot, value, confidence),
        {m: float(v) for m, v in zip(models, per_model, strict=True)},
        int((in_a & complete).sum()),
        int((in_b & complete).sum()),
        k,
        k,
    )


def aggregated_g(
    scores: pd.DataFrame,
    a: Collection[str],
    b: Collection[str],
    *,
    measure: str,
    models: Sequence[str],
    histories: Sequence[str],
    over_histories: str,
    confidence: float,
    resamples: int,
    seed: int,
    clusters: Mapping[str, str] | None = None,
) -> AggregatedG:
    """The paper's aggregate of Hedges' g (group a vs b) with its bootstrap interval.

    Args:
        scores: Story-level scores of one formulation (:data:`storyflow.tables.STORY_SEQUENTIALITY`
            rows: ``story_id``, ``model``, ``history`` and the ``measure`` column), stories already
            filtered as the effect sizes are (``stats.min_sentences``).
        a, b: The story ids of each group.
        measure: ``seq``, ``nll_base`` or ``nll_context`` (nats/token).
        models, histories: The models averaged and the history labels summarised.
        over_histories: ``median`` or ``mean`` (:data:`OVER_HISTORIES`).
        confidence, resamples, seed: the interval's level, resamples and seed.
        clusters: The unit each story belongs to (a passage's book); the bootstrap resamples
            these units within each group. None: each story is its own unit.
    """
    summarise = OVER_HISTORIES[over_histories]
    ids, in_a, in_b, x, seen = _centred_grid(scores, a, b, measure, models, histories)
    complete = seen.all(axis=1)
    n_a, n_b = int((in_a & complete).sum()), int((in_b & complete).sum())
    shape = (len(models), len(histories))
    point = _g(in_a[None].astype(float), in_b[None].astype(float), x, seen).reshape(shape)
    per_model, value = _point(point, summarise)
    rng = np.random.default_rng(seed)
    units = _unit_numbers(ids, clusters)
    draws = _g(_draws(in_a, units, resamples, rng), _draws(in_b, units, resamples, rng), x, seen)
    boot = _resampled(draws.reshape(resamples, *shape), summarise)
    return AggregatedG(
        value,
        _percentile_ci(boot, value, confidence),
        {m: float(v) for m, v in zip(models, per_model, strict=True)},
        n_a,
        n_b,
        int(np.unique(units[in_a & complete]).size),
        int(np.unique(units[in_b & complete]).size),
    )


def contrast_g(
    scores: pd.DataFrame,
    a: Collection[str],
    b: Collection[str],
    *,
    clusters: Mapping[str, str] | None = None,
    blocks: Mapping[str, str] | None = None,
    **settings: Any,
) -> AggregatedG:
    """Fiction Flows' aggregate of a contrast's effect size, the one estimate the replication
    and a study's contrast answers both read: g_av over matched blocks when ``blocks`` are given
    (:func:`matched_g`), else Hedges' g over stories, or over ``clusters`` (a passage's book),
    resampled within each group (:func:`aggregated_g`). ``settings``: the keywords both take
    (``measure``, ``models``, ``histories``, ``over_histories``, ``confidence``, ``resamples``,
    ``seed``)."""
    if blocks is not None:
        return matched_g(scores, a, b, blocks=blocks, **settings)
    return aggregated_g(scores, a, b, clusters=clusters or None, **settings)
