"""Calibration of the embedding judge on ROCStories: forecasts against the right and wrong ending.

The judge compares a *forecast* with the actual remainder, so the threshold is fitted on the same
kind of pair. For each ROCStories cloze story the configured forecaster samples K endings from
the four context sentences, with the tension forecast prompt and sampling settings
(:func:`calibration_cuts` makes each story one cut; ``storyflow.measures.tension.forecast``
samples it). Each forecast is embedded and compared (cosine) with the story's right ending
(a pair that should match) and its wrong ending (a pair that should not). The stories are split
in two halves at random (seeded per story id; all forecasts of a story fall in the same half);
on the ``fit`` half the threshold that classifies most pairs correctly (match when cosine >=
threshold) is chosen, and its accuracy is reported on both halves. The threshold therefore
belongs to one forecaster (and its K and sampling settings): each forecaster has its own table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.seeds import item_rng

log = logging.getLogger(__name__)

#: Label columns of the ROCStories stories table the calibration reads.
CLOZE_COLUMNS = ("context", "right_ending", "wrong_ending")
#: Stories the calibration needs at the least (two per half).
MIN_STORIES = 4


def calibration_stories(cloze: pd.DataFrame, n: int) -> pd.DataFrame:
    """The first ``n`` stories of the ROCStories stories table (itself a seeded draw, config
    ``stories.rocstories``) that have a context and both endings; at least :data:`MIN_STORIES`."""
    missing = sorted(set(CLOZE_COLUMNS) - set(cloze.columns))
    if missing:
        raise StoryflowError(
            f"the ROCStories stories table lacks the columns {missing} of the calibration "
            "(results/rocstories/stories.parquet; re-run read_corpus_stories)"
        )
    complete = cloze.dropna(subset=list(CLOZE_COLUMNS))
    filled = complete[list(CLOZE_COLUMNS)].apply(lambda column: column.str.strip() != "")
    complete = complete[filled.all(axis=1)]
    if len(complete) < len(cloze):
        log.warning(
            "%d ROCStories stories lack a context or an ending: not used for the calibration",
            len(cloze) - len(complete),
        )
    chosen = complete.head(n).reset_index(drop=True)
    if len(chosen) < MIN_STORIES:
        raise StoryflowError(
            f"calibrating the embedding judge needs at least {MIN_STORIES} ROCStories stories, "
            f"not {len(chosen)}: raise stories.rocstories.stories and "
            "tension.embedding.calibration_stories (or fix tension.embedding.threshold)"
        )
    return chosen


def calibration_cuts(cloze: pd.DataFrame, count: Callable[[str], int], model: str) -> pd.DataFrame:
    """Each cloze story as one cut (:data:`tables.TENSION_CUTS`): prefix = the four context
    sentences, remainder = the right ending, pct = context tokens / (context + right ending)
    tokens (``count``: tokens of a text with the forecaster's tokenizer)."""
    rows = []
    for story in cloze.itertuples(index=False):
        prefix_tokens = count(story.context)
        story_tokens = prefix_tokens + count(" " + story.right_ending)
        rows.append(
            (
                story.story_id,
                "rocstories",
                model,
                0,
                3,
                prefix_tokens / story_tokens,
                prefix_tokens,
                story_tokens,
                story.context,
                story.right_ending,
            )
        )
    return tables.TENSION_CUTS.frame(rows)


def best_threshold(right: np.ndarray, wrong: np.ndarray) -> float:
    """The cosine threshold that classifies most of ``right`` (>= it) and ``wrong`` (< it)
    correctly: the midpoint between two neighbouring observed scores (ties: the lowest)."""
    values = np.unique(np.concatenate([right, wrong]))
    candidates = np.concatenate(
        [[values[0] - 1e-9], (values[:-1] + values[1:]) / 2, [values[-1] + 1e-9]]
    )
    accuracy = [
        (np.sum(right >= t) + np.sum(wrong < t)) / (len(right) + len(wrong)) for t in candidates
    ]
    return float(candidates[int(np.argmax(accuracy))])


def ending_cosines(
    endings: pd.DataFrame,
    cloze: pd.DataFrame,
    encode: Callable[[Sequence[str]], np.ndarray],
) -> pd.DataFrame:
    """Per forecast with text: story_id, sample, ``right`` and ``wrong`` (cosines of the
    forecast with the story's right and wrong ending, -1..1)."""
    judged = endings[endings["text"].str.strip() != ""]
    truth = cloze.set_index("story_id").loc[judged["story_id"]]
    forecasts = encode(judged["text"].tolist())
    right = np.einsum("ij,ij->i", forecasts, encode(truth["right_ending"].tolist()))
    wrong = np.einsum("ij,ij->i", forecasts, encode(truth["wrong_ending"].tolist()))
    return pd.DataFrame(
        {
            "story_id": judged["story_id"].to_numpy(),
            "sample": judged["sample"].to_numpy(),
            "right": right,
            "wrong": wrong,
        }
    )


def calibrate_threshold(
    endings: pd.DataFrame,
    cloze: pd.DataFrame,
    encode: Callable[[Sequence[str]], np.ndarray],
    seed: int,
    embedding_model: str,
) -> tuple[float, pd.DataFrame]:
    """The embedding judge's threshold from forecasts of ROCStories stories, and the
    calibration table (:data:`tables.TENSION_CALIBRATION`, one row per half).

    ``endings``: the forecaster's endings of :func:`calibration_cuts` (:data:`tables.
    TENSION_ENDINGS`); ``cloze``: story_id, right_ending, wrong_ending (the stories of
    ``endings`` are used). Columns of the table:
    the forecaster (``model``), ``k`` (forecasts per story), ``embedding_model``, ``seed``, the
    ``half`` (``fit`` or ``held-out``), its ``n_stories``, ``n_forecasts`` (with text) and
    ``n_empty`` (forecasts without text, left out), the ``threshold`` (cosine, fitted on the fit
    half), ``accuracy`` (share of the half's forecast-ending pairs classified correctly: right
    ending at or above the threshold, wrong ending below), ``pairwise_accuracy`` (share of
    forecasts closer to the right ending than to the wrong one) and the mean cosine with the
    right and the wrong ending.
    """
    cloze = cloze[cloze["story_id"].isin(endings["story_id"])]
    cosines = ending_cosines(endings, cloze, encode)
    ids = cloze["story_id"].tolist()
    draws = np.array([item_rng(seed, sid).random() for sid in ids])
    fit_ids = {sid for sid, draw in zip(ids, draws, strict=True) if draw < np.median(draws)}
    in_fit = cosines["story_id"].isin(fit_ids).to_numpy()
    fit = cosines[in_fit]
    if fit.empty or len(fit) == len(cosines):
        raise StoryflowError(
            "calibrating the embedding judge: a half of the ROCStories stories has no forecast "
            "with text (all endings empty?); see the sample_calibration_endings log"
        )
    threshold = best_threshold(fit["right"].to_numpy(), fit["wrong"].to_numpy())
    model = str(endings["model"].iloc[0])
    k = int(endings.groupby("story_id").size().max())
    rows = []
    for half, mask in (("fit", in_fit), ("held-out", ~in_fit)):
        part = cosines[mask]
        right, wrong = part["right"].to_numpy(), part["wrong"].to_numpy()
        half_ids = fit_ids if half == "fit" else set(ids) - fit_ids
        n_all = int(endings["story_id"].isin(half_ids).sum())
        rows.append(
            (
                model,
                k,
                embedding_model,
                seed,
                half,
                len(half_ids),
                len(part),
                n_all - len(part),
                threshold,
                float((np.sum(right >= threshold) + np.sum(wrong < threshold)) / (2 * len(part))),
                float(np.mean(right > wrong)),
                float(right.mean()),
                float(wrong.mean()),
            )
        )
    table = tables.TENSION_CALIBRATION.frame(rows)
    held_out = table.iloc[1]
    log.info(
        "%s: embedding judge threshold %.4f; held-out accuracy %.3f (pairwise %.3f) over %d "
        "forecasts of %d stories",
        model,
        threshold,
        held_out["accuracy"],
        held_out["pairwise_accuracy"],
        held_out["n_forecasts"],
        held_out["n_stories"],
    )
    return threshold, table
