"""The narrative-sense threshold (Roemmele et al.): a story against a random story of its group.

For each scored story a *random story* is made with as many distinct recognized lemmas as the
story, drawn from its group's *word pool*: the recognized lemmas of the group's included stories,
each weighted by how often it occurs there (:data:`WEIGHTINGS`). Both stories' pair scores
(:func:`storyflow.measures.narrative_sense.pmi.pair_scores`) go into a one-sided Wilcoxon
rank-sum test; a story whose pairs score higher at p < alpha *exceeds the threshold*.

A corpus that is both a reference and a target can be *cross-fitted* (:func:`assess_cross_fitted`):
its stories are split into folds by a seeded hash of their ids, and each fold is scored against a
PMI table counted without it, so no story is scored against its own pairs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from storyflow import tables
from storyflow.measures.narrative_sense.pmi import (
    LEMMA_COLUMNS,
    PairTable,
    count_pairs,
    pair_scores,
    score_stories,
    truncate,
)
from storyflow.seeds import item_rng, stable_hash
from storyflow.settings import FromParams

log = logging.getLogger(__name__)

#: How the words of a group's pool are weighted in the random story's draw:
#: ``stories``: by the number of the group's included stories that hold the lemma (each story is
#: a set of lemmas, so pooling the group's stories gives a lemma once per story holding it; the
#: paper's reading, docs/narrative_sense.md); ``tokens``: by the lemma's occurrences in those
#: stories (after the cut); ``uniform``: every distinct lemma of the group alike (storyflow's
#: earlier draw).
WEIGHTINGS = ("stories", "tokens", "uniform")


@dataclass(frozen=True)
class WordPool:
    """A group's word pool: vocabulary ``ids`` (sorted, unique) and their draw ``weights``
    (positive; counts for ``stories`` and ``tokens``, ones for ``uniform``, which also sets
    ``uniform``)."""

    ids: np.ndarray
    weights: np.ndarray

    uniform: bool = False

    @property
    def probabilities(self) -> np.ndarray | None:
        """The weights normalized to sum to 1 (the probability of each id on the first draw);
        None for a uniform pool (numpy's equal-probability draw, storyflow's earlier one)."""
        return None if self.uniform else self.weights / self.weights.sum()


def word_pools(lemmas: pd.DataFrame, table: PairTable, weighting: str) -> dict[str, WordPool]:
    """Per group of ``lemmas`` (the included stories, already cut), its :class:`WordPool`.

    Only lemmas in ``table``'s vocabulary enter (the story's own pairs are over recognized
    lemmas only). ``weighting``: one of :data:`WEIGHTINGS`.
    """
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting {weighting!r}: use one of {', '.join(WEIGHTINGS)}")
    index = pd.Index(table.vocabulary["lemma"])
    pools = {}
    for group, stories in lemmas.groupby("group", sort=False)["lemmas"]:
        per_story = [index.get_indexer(list(lm)) for lm in stories]
        per_story = [ids[ids >= 0] for ids in per_story]
        if weighting == "stories":
            per_story = [np.unique(ids) for ids in per_story]
        pooled = np.concatenate(per_story or [np.zeros(0, np.int64)]).astype(np.int64)
        ids, counts = np.unique(pooled, return_counts=True)
        weights = np.ones(len(ids)) if weighting == "uniform" else counts.astype(np.float64)
        pools[str(group)] = WordPool(ids, weights, uniform=weighting == "uniform")
    return pools


def random_story(pool: WordPool, n: int, seed: int, story_id: str) -> np.ndarray:
    """``n`` distinct vocabulary ids drawn from ``pool`` for story ``story_id``.

    Successive weighted draws without replacement (``Generator.choice(replace=False, p=...)``):
    the same as drawing words from the pooled stories one at a time, skipping a word already
    drawn, until the random story has ``n`` distinct lemmas. The generator is
    ``storyflow.seeds.item_rng(seed, story_id)``: the draw depends on the seed, the story's id
    and its group's pool only, not on the other stories or their order.
    """
    rng = item_rng(seed, story_id)
    return rng.choice(pool.ids, size=n, replace=False, p=pool.probabilities).astype(np.int64)


def narrative_sense_threshold(
    scores: pd.DataFrame,
    table: PairTable,
    pools: dict[str, WordPool],
    *,
    alpha: float,
    seed: int,
) -> pd.DataFrame:
    """Rank-sum test of each included story's pair scores against its random story.

    ``scores``: :func:`~storyflow.measures.narrative_sense.pmi.score_stories`'s table with the
    columns ``included`` (False: left out by the short-set filter, not tested) and ``exclusion``
    (why; empty for included stories). ``pools``: :func:`word_pools` of the included stories.
    Adds p_value (one-sided Mann-Whitney U, story > random; NaN when untested), exceeds
    (p < alpha; False when untested) and reason (why untested: the exclusion's reason, or
    fewer than 2 recognized lemmas; empty when tested).
    """
    codes = table.codes
    p_values, reasons = [], []
    for row in scores.itertuples(index=False):
        if not row.included:
            p_values.append(np.nan)
            reasons.append(f"left out: {row.exclusion}")
            continue
        if row.n_lemmas < 2:
            p_values.append(np.nan)
            reasons.append("fewer than 2 recognized lemmas")
            continue
        drawn = random_story(pools[str(row.group)], int(row.n_lemmas), seed, str(row.story_id))
        random_pmi, _ = pair_scores(drawn, table, codes)
        # same precision as the stored story scores (float32), so equal PMIs tie
        test = sps.mannwhitneyu(
            np.asarray(row.pair_pmi, dtype=np.float32),
            random_pmi.astype(np.float32),
            alternative="greater",
        )
        p_values.append(float(test.pvalue))
        reasons.append("")
    out = scores.copy()
    out["p_value"] = p_values
    out["exceeds"] = out["p_value"] < alpha
    out["reason"] = reasons
    return out.drop(columns="exclusion")


def _mark_exclusions(scores: pd.DataFrame, exclusions: pd.DataFrame) -> pd.DataFrame:
    """``scores`` with ``included`` and ``exclusion`` from the short-set filter's table."""
    why = dict(zip(exclusions["story_id"], exclusions["reason"], strict=True))
    out = scores.copy()
    out["exclusion"] = [why.get(sid, "") for sid in out["story_id"]]
    out["included"] = ~out["story_id"].isin(why)
    return out


def assess(
    lemmas: pd.DataFrame,
    exclusions: pd.DataFrame,
    table: PairTable,
    *,
    top_pairs: int,
    weighting: str,
    alpha: float,
    seed: int,
) -> pd.DataFrame:
    """Score the stories of ``lemmas`` (already cut) against ``table`` and test them.

    ``exclusions``: the stories left out by the short-set filter
    (:func:`storyflow.measures.narrative_sense.length_filter.short_sets`): they are scored but
    not tested, and they do not enter the word pools. Returns :func:`narrative_sense_threshold`'s
    table with ``included`` and ``fold`` (0).
    """
    scores = _mark_exclusions(score_stories(lemmas, table, top_pairs), exclusions)
    scores["fold"] = 0
    pools = word_pools(lemmas[scores["included"].to_numpy()], table, weighting)
    return narrative_sense_threshold(scores, table, pools, alpha=alpha, seed=seed)


def fold_of(story_ids: pd.Series, folds: int, seed: int) -> np.ndarray:
    """Each story's fold, 0..folds-1, from a seeded hash of its id (a story's fold does not
    depend on the other stories)."""
    return np.array([stable_hash(f"{seed}:{sid}") % folds for sid in story_ids], dtype=np.int64)


def assess_cross_fitted(
    lemmas: pd.DataFrame,
    exclusions: pd.DataFrame,
    others: pd.DataFrame | None,
    *,
    folds: int,
    max_tokens: int,
    reference_max_tokens: int | None,
    min_stories: int,
    top_pairs: int,
    weighting: str,
    alpha: float,
    seed: int,
) -> pd.DataFrame:
    """:func:`assess` for a corpus that is also a reference: each fold against a table without it.

    ``lemmas``: the corpus's lemma table before any cut; ``others``: the lemma tables of the
    other reference corpora (None or empty: the corpus is the only one; cut to
    ``reference_max_tokens`` here). Fold k's stories
    (:func:`fold_of`) are scored against the PMI table of ``others`` plus the corpus's other
    folds (each reference story cut to ``reference_max_tokens`` tokens), and their random stories
    come from their group's pool in that table's vocabulary (the pool holds every included story
    of the group, whatever its fold). Returns the rows in ``lemmas``' order, ``fold`` = k.
    """
    lemmas = lemmas.reset_index(drop=True)
    fold = fold_of(lemmas["story_id"], folds, seed)
    columns = list(LEMMA_COLUMNS)
    reference_others = (
        truncate(others[columns], reference_max_tokens)
        if others is not None and len(others)
        else pd.DataFrame(columns=columns)
    )
    reference_own = truncate(lemmas[columns], reference_max_tokens)
    scored = truncate(lemmas, max_tokens)
    mask = ~scored["story_id"].isin(set(exclusions["story_id"])).to_numpy()
    parts = []
    for k in range(folds):
        ref = pd.concat([reference_others, reference_own[fold != k]], ignore_index=True)
        table = count_pairs(ref, min_stories=min_stories)
        log.info(
            "fold %d: %d stories scored against %d reference stories (%d lemmas, floor %.3f)",
            k,
            int((fold == k).sum()),
            len(ref),
            len(table.vocabulary),
            table.floor,
        )
        in_fold = fold == k
        scores = _mark_exclusions(score_stories(scored[in_fold], table, top_pairs), exclusions)
        scores["fold"] = k
        pools = word_pools(scored[mask], table, weighting)
        tested = narrative_sense_threshold(scores, table, pools, alpha=alpha, seed=seed)
        parts.append(tested.set_index(scored.index[in_fold]))
    return pd.concat(parts).loc[scored.index].reset_index(drop=True)


@dataclass(frozen=True)
class ScoreSettings(FromParams):
    """How a target corpus's stories are scored and tested (rule ``score_narrative_sense``'s
    params, :func:`storyflow.plan.narrative_sense.score_settings`; config ``narrative_sense``,
    whose schema gives the defaults and ranges): ``cross_fitted`` (the corpus is also a
    reference and ``folds`` is set: :func:`assess_cross_fitted`), the cuts ``max_tokens`` and
    ``reference_max_tokens`` (tokens; None: not cut), the short-set filter's ``min_tokens``
    (None: no filter), ``min_stories`` (a lemma's reference stories to enter the vocabulary),
    ``top_pairs``, ``random_story`` (the word pool's weighting, :data:`WEIGHTINGS`), ``alpha``
    and ``seed``."""

    WHERE = "narrative_sense"

    cross_fitted: bool
    folds: int | None
    max_tokens: int
    reference_max_tokens: int | None
    min_tokens: int | None
    min_stories: int
    top_pairs: int
    random_story: str
    alpha: float
    seed: int


def assess_corpus(
    lemmas: pd.DataFrame,
    excluded: pd.DataFrame,
    settings: ScoreSettings,
    *,
    pairs: str | None,
    vocabulary: str | None,
    references: Sequence[str],
) -> pd.DataFrame:
    """A corpus's stories scored and tested (:func:`assess`'s table), the way its place among
    the references asks: a corpus that is also a reference (``settings.cross_fitted``) is scored
    fold by fold against the other references' lemma tables (``references``: their paths) and
    its other folds (:func:`assess_cross_fitted`); any other against the PMI table of the
    references (``pairs`` and ``vocabulary``: its files, rule count_pairs), its stories cut to
    ``settings.max_tokens``."""
    test: dict[str, Any] = {
        "top_pairs": settings.top_pairs,
        "weighting": settings.random_story,
        "alpha": settings.alpha,
        "seed": settings.seed,
    }
    if settings.cross_fitted:
        if settings.folds is None:
            raise ValueError("a cross-fitted corpus is scored fold by fold: folds is not set")
        return assess_cross_fitted(
            lemmas,
            excluded,
            tables.read_all(tables.LEMMAS, list(references)) if references else None,
            folds=settings.folds,
            max_tokens=settings.max_tokens,
            reference_max_tokens=settings.reference_max_tokens,
            min_stories=settings.min_stories,
            **test,
        )
    if pairs is None or vocabulary is None:
        raise ValueError("a corpus that is not cross-fitted is scored against a PMI table")
    table = PairTable.load(pairs, vocabulary)
    return assess(truncate(lemmas, settings.max_tokens), excluded, table, **test)


def group_table(tested: pd.DataFrame) -> pd.DataFrame:
    """Per group: n_stories (all scored), n_excluded (left out by the short-set filter),
    n_tested, n_exceeding, share_exceeding (n_exceeding / n_tested, 0..1), and over the included
    stories the median of median_pmi and of median_pmi_top, the mean seen_share and the median
    n_lemmas."""
    frame = tested.assign(tested=tested["p_value"].notna(), excluded=~tested["included"])
    counts = (
        frame.groupby("group", sort=False)
        .agg(
            n_stories=("story_id", "size"),
            n_excluded=("excluded", "sum"),
            n_tested=("tested", "sum"),
            n_exceeding=("exceeds", "sum"),
        )
        .reset_index()
    )
    medians = (
        frame[frame["included"]]
        .groupby("group", sort=False)
        .agg(
            median_pmi=("median_pmi", "median"),
            median_pmi_top=("median_pmi_top", "median"),
            seen_share=("seen_share", "mean"),
            median_lemmas=("n_lemmas", "median"),
        )
        .reset_index()
    )
    return counts.merge(medians, on="group", how="left").assign(
        share_exceeding=lambda t: t["n_exceeding"] / t["n_tested"].where(t["n_tested"] > 0)
    )
