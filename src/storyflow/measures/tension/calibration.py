"""Forecasts of ROCStories stories, judged against their right and wrong endings: the
calibration of the embedding judge and the items with known answers of the validity checks.

For each ROCStories cloze story the configured forecaster samples K endings from the four
context sentences, with the tension forecast prompt and sampling settings
(:func:`calibration_cuts` makes each story one cut; ``storyflow.measures.tension.forecast``
samples it). Each forecast with text is embedded (:func:`storyflow.measures.tension.judges.
embed_whole`) and compared (cosine) with the story's right ending (a pair that should match) and
its wrong ending (a pair that should not): :func:`ending_cosines`. The stories are split in two
halves at random (:func:`split_halves`: seeded per story id; all forecasts of a story fall in
the same half); on the ``fit`` half the threshold that classifies most pairs correctly (match
when cosine >= threshold) is chosen, and its accuracy is reported on both halves
(:func:`calibrate_threshold`). The threshold therefore belongs to one forecaster (and its K and
sampling settings): each forecaster has its own table. An LLM judge is asked about the
``held-out`` half's forecasts against both endings (:func:`judge_calibration`); it is fitted
on nothing. The checks themselves: :mod:`storyflow.measures.tension.validity`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.measures.tension.judges import (
    embed_unique,
    embed_whole,
    judge_by_model,
    model_judge,
)
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
            "(results/rocstories/corpus/stories.parquet; re-run read_corpus_stories)"
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
            f"the tension calibration (judge threshold and validity checks) needs at least "
            f"{MIN_STORIES} ROCStories stories, not {len(chosen)}: raise "
            "stories.rocstories.stories and tension.embedding.calibration_stories"
        )
    return chosen


def calibration_cuts(
    cloze: pd.DataFrame, count: Callable[[str], int], model: str, unit: str = "tokens"
) -> pd.DataFrame:
    """Each cloze story as one cut (:data:`tables.TENSION_CUTS`): prefix = the four context
    sentences, remainder = the right ending, pct = context tokens / (context + right ending)
    tokens (``count``: tokens of a text with the forecaster's tokenizer, or words: ``unit``)."""
    rows = []
    for story in cloze.itertuples(index=False):
        prefix_tokens = count(story.context)
        story_tokens = prefix_tokens + count(" " + story.right_ending)
        rows.append(
            tables.TENSION_CUTS.row(
                story_id=story.story_id,
                story_type="rocstories",
                model=model,
                cut=0,
                sentence_idx=3,
                pct=prefix_tokens / story_tokens,
                prefix_tokens=prefix_tokens,
                story_tokens=story_tokens,
                unit=unit,
                prefix=story.context,
                remainder=story.right_ending,
            )
        )
    return tables.TENSION_CUTS.frame(rows)


def split_halves(story_ids: Sequence[str], seed: int) -> dict[str, str]:
    """story id → ``fit`` or ``held-out``: each story draws a number from ``(seed, story id)``;
    the stories below the median draw are the fit half (so a story's half depends on the seed
    and the set of stories, not on their order)."""
    ids = list(dict.fromkeys(story_ids))
    draws = np.array([item_rng(seed, sid).random() for sid in ids])
    median = np.median(draws) if len(ids) else 0.0
    return {
        sid: "fit" if draw < median else "held-out" for sid, draw in zip(ids, draws, strict=True)
    }


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
    seed: int,
    chunk_words: int | None,
) -> pd.DataFrame:
    """Per forecast with text (:data:`tables.TENSION_CALIBRATION_COSINES`): its story, sample,
    half (:func:`split_halves` of the stories of ``endings``) and the cosines (-1..1) of the
    forecast with the story's right and wrong ending (texts read whole,
    :func:`~storyflow.measures.tension.judges.embed_whole`); ``context_right`` and
    ``context_wrong``: the same cosines for the story's four context sentences, the forecast of
    a forecaster that only repeats the story so far (a baseline)."""
    halves = split_halves(endings["story_id"], seed)
    judged = endings[endings["text"].str.strip() != ""]
    truth = cloze.drop_duplicates("story_id").set_index("story_id").loc[judged["story_id"]]
    forecasts = embed_whole(encode, judged["text"].tolist(), chunk_words)
    right_vectors = embed_unique(encode, truth["right_ending"].tolist(), chunk_words)
    wrong_vectors = embed_unique(encode, truth["wrong_ending"].tolist(), chunk_words)
    right = np.einsum("ij,ij->i", forecasts, right_vectors)
    wrong = np.einsum("ij,ij->i", forecasts, wrong_vectors)
    context = embed_unique(encode, truth["context"].tolist(), chunk_words)
    return tables.TENSION_CALIBRATION_COSINES.frame(
        pd.DataFrame(
            {
                "model": judged["model"].to_numpy(),
                "story_id": judged["story_id"].to_numpy(),
                "sample": judged["sample"].to_numpy(),
                "half": [halves[sid] for sid in judged["story_id"]],
                "right": right,
                "wrong": wrong,
                "context_right": np.einsum("ij,ij->i", context, right_vectors),
                "context_wrong": np.einsum("ij,ij->i", context, wrong_vectors),
            }
        )
    )


def _fit_half_threshold(cosines: pd.DataFrame) -> float:
    """The cosine threshold fitted on the ``fit`` half's forecasts (:func:`best_threshold`);
    an error when either half has no forecast with text."""
    fit = cosines[cosines["half"] == "fit"]
    if fit.empty or len(fit) == len(cosines):
        raise StoryflowError(
            "calibrating the embedding judge: a half of the ROCStories stories has no forecast "
            "with text (all endings empty?); see the sample_calibration_endings log"
        )
    return best_threshold(fit["right"].to_numpy(), fit["wrong"].to_numpy())


def calibrate_threshold(
    endings: pd.DataFrame,
    cosines: pd.DataFrame,
    seed: int,
    embedding_model: str,
) -> tuple[float, pd.DataFrame]:
    """The embedding judge's threshold from forecasts of ROCStories stories, and the
    calibration table (:data:`tables.TENSION_CALIBRATION`, one row per half).

    ``endings``: the forecaster's endings of :func:`calibration_cuts` (:data:`tables.
    TENSION_ENDINGS`); ``cosines``: their :func:`ending_cosines` (drawn with ``seed``).
    Columns of the table: the forecaster (``model``), ``k`` (forecasts per story),
    ``embedding_model``, ``seed``, the ``half`` (``fit`` or ``held-out``), its ``n_stories``,
    ``n_forecasts`` (with text) and ``n_empty`` (forecasts without text, left out), the
    ``threshold`` (cosine, fitted on the fit half), ``accuracy`` (share of the half's
    forecast-ending pairs classified correctly: right ending at or above the threshold, wrong
    ending below), ``pairwise_accuracy`` (share of forecasts closer to the right ending than to
    the wrong one) and the mean cosine with the right and the wrong ending.
    """
    halves = split_halves(endings["story_id"], seed)
    threshold = _fit_half_threshold(cosines)
    model = str(endings["model"].iloc[0])
    k = int(endings.groupby("story_id").size().max())
    rows = []
    for half in ("fit", "held-out"):
        part = cosines[cosines["half"] == half]
        right, wrong = part["right"].to_numpy(), part["wrong"].to_numpy()
        half_ids = {sid for sid, h in halves.items() if h == half}
        n_all = int(endings["story_id"].isin(half_ids).sum())
        rows.append(
            tables.TENSION_CALIBRATION.row(
                model=model,
                k=k,
                embedding_model=embedding_model,
                seed=seed,
                half=half,
                n_stories=len(half_ids),
                n_forecasts=len(part),
                n_empty=n_all - len(part),
                threshold=threshold,
                accuracy=float(
                    (np.sum(right >= threshold) + np.sum(wrong < threshold)) / (2 * len(part))
                ),
                pairwise_accuracy=float(np.mean(right > wrong)),
                mean_right=float(right.mean()),
                mean_wrong=float(wrong.mean()),
            )
        )
    table = tables.TENSION_CALIBRATION.frame(rows)
    _log_held_out(model, threshold, table)
    return threshold, table


def _log_held_out(model: str, threshold: float, table: pd.DataFrame) -> None:
    """Log the embedding judge's cosine ``threshold`` and its accuracy and pairwise accuracy
    (shares) on the held-out half of the calibration ``table``."""
    held_out = table.set_index("half").loc["held-out"]
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


def judge_calibration(
    endings: pd.DataFrame,
    cloze: pd.DataFrame,
    seed: int,
    answer: Callable[[list[str]], Sequence[Any]],
    render: Callable[[str, str], Any],
    judge: str,
) -> pd.DataFrame:
    """An LLM judge's verdicts on the ``held-out`` half's calibration forecasts (halves of
    :func:`split_halves` with ``seed``), each judged against the story's right ending and its
    wrong ending (:func:`~storyflow.measures.tension.judges.judge_by_model`: ``render(actual,
    predicted)`` the prompt, ``answer(prompts)`` their closed Y/N answers; match when P(Y) > 0.5):
    :data:`tables.TENSION_CALIBRATION_JUDGMENTS`, two rows per forecast (``ending`` right,
    wrong). Costs two judge prompts per forecast (with or without text: an empty forecast gets
    no verdict and no prompt)."""
    halves = split_halves(endings["story_id"], seed)
    held_out = endings[endings["story_id"].map(halves) == "held-out"]
    truth = cloze.drop_duplicates("story_id").set_index("story_id")
    frames = []
    start = time.perf_counter()
    for ending, column in (("right", "right_ending"), ("wrong", "wrong_ending")):
        cuts = pd.DataFrame({"story_id": truth.index, "cut": 0, "remainder": truth[column]})
        verdicts = judge_by_model(held_out, cuts.reset_index(drop=True), answer, render, judge)
        frames.append(verdicts.assign(ending=ending, half="held-out"))
    seconds = time.perf_counter() - start
    table = tables.TENSION_CALIBRATION_JUDGMENTS.frame(pd.concat(frames, ignore_index=True))
    forecasts = int((held_out["text"].str.strip() != "").sum())
    log.info(
        "judge %s: %d held-out forecasts of %s judged against both endings (%d prompts) in "
        "%.1f s: %.2f s per forecast; %s",
        judge,
        forecasts,
        ", ".join(dict.fromkeys(held_out["model"].astype(str))),
        2 * forecasts,
        seconds,
        seconds / max(forecasts, 1),
        table["status"].value_counts().to_dict(),
    )
    return table


def judge_calibration_with_model(
    endings: pd.DataFrame, cloze: pd.DataFrame, seed: int, model: Any, settings: Mapping[str, Any]
) -> pd.DataFrame:
    """:func:`judge_calibration` by ``model`` (a :class:`storyflow.lm.connect.LanguageModel`)
    with the judge prompt of ``settings`` (:func:`~storyflow.measures.tension.judges.model_judge`;
    its window sized to the stories' right and wrong endings and the forecasts): rule
    ``judge_calibration_endings``."""
    stories = cloze[cloze["story_id"].isin(endings["story_id"])]
    actual = [*stories["right_ending"], *stories["wrong_ending"]]
    answer, render = model_judge(model, settings, actual, endings["text"])
    return judge_calibration(endings, cloze, seed, answer, render, model.name)
