"""Judges: does a predicted ending capture the general direction of the actual remainder?

Two kinds, chosen in config (``tension.judges``):

- **embedding** (``"embedding"``): cosine of the sentence embeddings (all-MiniLM-L6-v2, unit
  vectors) of the predicted ending and the actual remainder; a match when the cosine is at least
  a threshold. The encoder reads at most 256 word pieces (about 200 words) and would drop the
  rest of a long remainder, so every text is embedded whole (:func:`embed_whole`): a text of
  more than ``chunk_words`` (``tension.embedding.chunk_words``) words is split into nearly
  equal runs of consecutive words, and its vector is the mean of their unit vectors, scaled to
  unit length. The threshold is calibrated per forecaster on its own forecasts of ROCStories
  stories (:mod:`storyflow.measures.tension.calibration`) unless the config fixes one in
  [-1, 1].
  ``score`` = the cosine.
- **LLM** (a model name of ``models:``): the model is asked whether the predicted ending captures
  the broad plot trajectory of the actual continuation and answers a closed choice, Y or N, read
  from its answer probabilities (no text generated; ``storyflow.lm.answers``). ``score`` =
  P(Y) renormalised over {Y, N}; a match when P(Y) > 0.5. ``mass`` = P(Y) + P(N) before
  renormalising (a low mass flags a prompt the model does not read as a Y/N question).

An ending with no text gets no verdict (``status`` ``empty forecast``); an answer set with no
probability (mass 0 or not finite) neither (``empty answer set``). Both are counted by the
curves (``n_unjudged``): the no-rate's denominator is every sampled ending (K), and an ending
without a verdict counts as a miss (:func:`storyflow.measures.tension.curves.cut_no_rates`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.lm.connect import job_spec, open_model
from storyflow.lm.embeddings import load_encoder
from storyflow.measures.tension import curves
from storyflow.progress import LoggedBar

log = logging.getLogger(__name__)

EMBEDDING = "embedding"
JUDGED, EMPTY_FORECAST, EMPTY_ANSWERS = "judged", "empty forecast", "empty answer set"
#: Answer options of the LLM judge (each with its variants, see storyflow.lm.answers).
YES_NO = {"Y": ["Y", " Y", "Yes", " Yes"], "N": ["N", " N", "No", " No"]}


def _verdicts(
    endings: pd.DataFrame,
    judge: str,
    scores: ArrayLike,
    matches: ArrayLike,
    masses: ArrayLike,
    statuses: ArrayLike,
) -> pd.DataFrame:
    """The judgments table: ``endings``' keys with the judge's columns (each one value per
    ending, or one value for all)."""
    frame = endings[["story_id", "story_type", "model", "cut", "sentence_idx", "pct", "sample"]]
    frame = frame.assign(judge=judge, score=scores, mass=masses, match=matches, status=statuses)
    return tables.TENSION_JUDGMENTS.frame(frame)


def remainders_of(endings: pd.DataFrame, cuts: pd.DataFrame) -> pd.Series:
    """The actual remainder of each ending's cut (aligned with ``endings``)."""
    truth = cuts.set_index(["story_id", "cut"])["remainder"]
    index = pd.MultiIndex.from_frame(endings[["story_id", "cut"]])
    return pd.Series(truth.reindex(index).to_numpy(), index=endings.index)


def embed_whole(
    encode: Callable[[Sequence[str]], np.ndarray],
    texts: Sequence[str],
    chunk_words: int | None,
) -> np.ndarray:
    """Unit-length embeddings of ``texts``, each read whole: a text of more than
    ``chunk_words`` words is split into ceil(words / chunk_words) nearly equal runs of
    consecutive words, each run embedded, and the text's vector is the mean of the runs' unit
    vectors, scaled to unit length; a shorter text is embedded as it is. ``chunk_words`` None:
    every text as it is (the encoder truncates what it cannot read)."""
    pieces: list[str] = []
    owner: list[int] = []
    for t, text in enumerate(texts):
        words = text.split()
        if chunk_words is None or len(words) <= chunk_words:
            pieces.append(text)
            owner.append(t)
            continue
        for run in np.array_split(np.arange(len(words)), math.ceil(len(words) / chunk_words)):
            pieces.append(" ".join(words[run[0] : run[-1] + 1]))
            owner.append(t)
    vectors = np.asarray(encode(pieces), dtype=float)
    if len(pieces) == len(texts):
        return vectors
    sums = np.zeros((len(texts), vectors.shape[1]))
    np.add.at(sums, np.asarray(owner), vectors)
    return sums / np.linalg.norm(sums, axis=1, keepdims=True)


def embed_unique(
    encode: Callable[[Sequence[str]], np.ndarray],
    texts: Sequence[str],
    chunk_words: int | None,
) -> np.ndarray:
    """:func:`embed_whole` of ``texts``, each distinct text embedded once (the K endings of a
    cut share its remainder)."""
    distinct = list(dict.fromkeys(texts))
    vectors = embed_whole(encode, distinct, chunk_words)
    row = {text: i for i, text in enumerate(distinct)}
    return vectors[[row[text] for text in texts]]


def judge_by_embedding(
    endings: pd.DataFrame,
    cuts: pd.DataFrame,
    encode: Callable[[Sequence[str]], np.ndarray],
    threshold: float,
    chunk_words: int | None,
) -> pd.DataFrame:
    """Embedding verdicts (:data:`tables.TENSION_JUDGMENTS`): match when the cosine of the
    whole texts (:func:`embed_whole`) is at least ``threshold``."""
    truth = remainders_of(endings, cuts)
    has_text = endings["text"].str.strip() != ""
    scores = np.full(len(endings), np.nan)
    if has_text.any():
        predicted = embed_whole(encode, endings.loc[has_text, "text"].tolist(), chunk_words)
        actual = embed_unique(encode, truth[has_text].tolist(), chunk_words)
        scores[has_text.to_numpy()] = np.einsum("ij,ij->i", predicted, actual)
    matches = pd.array(
        [s >= threshold if not math.isnan(s) else pd.NA for s in scores], dtype="boolean"
    )
    statuses = np.where(has_text, JUDGED, EMPTY_FORECAST)
    return _verdicts(endings, EMBEDDING, scores, matches, np.nan, statuses)


@dataclass(frozen=True)
class JudgePrompt:
    """The LLM judge's question: ``system`` and ``user`` texts with ``{actual}`` and
    ``{predicted}``; ``cue`` ends the plain frame of base models."""

    system: str
    user: str
    cue: str

    def messages(self, actual: str, predicted: str) -> list[dict[str, str]]:
        text = self.user.replace("{actual}", actual).replace("{predicted}", predicted)
        messages = [{"role": "user", "content": text}]
        if self.system:
            messages.insert(0, {"role": "system", "content": self.system})
        return messages

    def render(self, model: Any, actual: str, predicted: str) -> Any:
        """The prompt for one ending (``model``: a :class:`storyflow.lm.connect.LanguageModel`)."""
        return model.render(self.messages(actual, predicted), cue=self.cue)


#: Longest texts (by characters) counted by :func:`judge_window` on either side.
LONGEST = 8


def judge_window(
    model: Any, frame: JudgePrompt, actual: Sequence[str], predicted: Sequence[str]
) -> int:
    """A context window (tokens) that holds every judge prompt of ``actual`` × ``predicted``
    texts plus the answer: the prompt around empty texts, plus the most tokens among the
    :data:`LONGEST` longest (in characters) actual and predicted texts, plus 16 tokens of
    answer, rounded up to 64 (``model``: a :class:`storyflow.lm.connect.LanguageModel`)."""

    def most(texts: Sequence[str]) -> int:
        longest = sorted(set(texts), key=len, reverse=True)[:LONGEST]
        return max((model.count_text(" " + text) for text in longest), default=0)

    frame_tokens = model.count(frame.render(model, "", ""))
    return -(-(frame_tokens + most(actual) + most(predicted) + 16) // 64) * 64


def judge_by_model(
    endings: pd.DataFrame,
    cuts: pd.DataFrame,
    answer: Callable[[list[str]], Sequence[Any]],
    render: Callable[[str, str], str],
    judge: str,
) -> pd.DataFrame:
    """LLM verdicts: ``render(actual, predicted)`` is the prompt, ``answer(prompts)`` their
    :class:`~storyflow.lm.answers.ClosedAnswer` over :data:`YES_NO`; match when P(Y) > 0.5.

    The endings judged against one remainder are asked in one call: their prompts begin
    alike (the frame and the remainder), so a model opened with ``share_prefix`` evaluates the
    remainder once and branches the endings from it."""
    truth = remainders_of(endings, cuts)
    n = len(endings)
    scores, masses = [math.nan] * n, [math.nan] * n
    matches: list[Any] = [pd.NA] * n
    statuses = [EMPTY_FORECAST] * n
    by_remainder: dict[str, list[int]] = {}
    for i, (predicted, actual) in enumerate(zip(endings["text"], truth, strict=True)):
        if predicted.strip():
            by_remainder.setdefault(actual, []).append(i)
    texts = list(endings["text"])
    start = time.perf_counter()
    for actual, rows in LoggedBar(by_remainder.items(), desc=f"judge {judge}"):
        results = answer([render(actual, texts[i]) for i in rows])
        for i, result in zip(rows, results, strict=True):
            masses[i] = result.mass
            if not (result.mass > 0 and math.isfinite(result.mass)):
                statuses[i] = EMPTY_ANSWERS
                continue
            scores[i] = result.probs[result.options.index("Y")]
            matches[i], statuses[i] = scores[i] > 0.5, JUDGED
    seconds = time.perf_counter() - start
    asked = sum(status != EMPTY_FORECAST for status in statuses)
    log.info(
        "judge %s: %d prompts in %.1f s (%.3f s per prompt)",
        judge,
        asked,
        seconds,
        seconds / max(asked, 1),
    )
    return _verdicts(endings, judge, scores, pd.array(matches, dtype="boolean"), masses, statuses)


def embedding_threshold(settings: Mapping[str, Any], calibration: str | Path | None) -> float:
    """The embedding judge's threshold: ``settings["threshold"]`` when the config fixes one,
    else the one calibrated on the forecaster's ROCStories forecasts (``threshold`` of the
    :data:`tables.TENSION_CALIBRATION` file ``calibration``)."""
    threshold = settings["threshold"]
    if threshold is not None:
        return threshold
    if calibration is None:
        raise StoryflowError(
            "tension.embedding.threshold is null (calibrate) but no calibration table was given"
        )
    table = tables.read(tables.TENSION_CALIBRATION, calibration)
    threshold = float(table["threshold"].iloc[0])
    log.info("calibrated threshold %.4f (%s)", threshold, calibration)
    return threshold


def model_judge(
    model: Any,
    settings: Mapping[str, Any],
    actual: Sequence[str],
    predicted: Sequence[str],
) -> tuple[Callable[[list[str]], Sequence[Any]], Callable[[str, str], Any]]:
    """``(answers, render)`` for :func:`judge_by_model` from ``model`` (a
    :class:`storyflow.lm.connect.LanguageModel`) and the judge prompt of ``settings``
    (``system``, ``user``, ``cue``; :class:`JudgePrompt`). The model's window is sized first
    (:func:`judge_window`) to the longest prompt of the ``actual`` texts and the ``predicted``
    endings it will judge, before its weights load."""
    frame = JudgePrompt(settings["system"], settings["user"], settings["cue"])
    model.n_ctx = judge_window(model, frame, list(actual), list(predicted))
    return (
        lambda prompts: model.answers(prompts, YES_NO),
        lambda actual_text, predicted_text: frame.render(model, actual_text, predicted_text),
    )


def judge_with_model(
    endings: pd.DataFrame, cuts: pd.DataFrame, model: Any, settings: Mapping[str, Any]
) -> pd.DataFrame:
    """LLM verdicts of ``model`` on every ending against its cut's remainder
    (:func:`judge_by_model`, asked through :func:`model_judge`)."""
    answer, render = model_judge(model, settings, cuts["remainder"], endings["text"])
    return judge_by_model(endings, cuts, answer, render, model.name)


def judge_endings(
    endings: pd.DataFrame,
    cuts: pd.DataFrame,
    settings: Mapping[str, Any],
    curve_settings: Mapping[str, Any],
    *,
    judge_model: Mapping[str, Any],
    config_models: Sequence[Mapping[str, Any]],
    model_path: str | Path | None,
    calibration: str | Path | None,
    threads: int,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One judge's verdicts on every ending of a forecaster, the no-rate of every cut and the
    story statistics of tension (rule ``judge_endings``).

    Args:
        endings: The forecaster's endings (:data:`tables.TENSION_ENDINGS`).
        cuts: Its cuts (:data:`tables.TENSION_CUTS`), with each cut's actual remainder.
        settings: The judge's settings (``storyflow.plan.tension.judge_settings``): ``kind``
            ``embedding`` (``model``, ``threshold``, ``chunk_words``) or ``llm`` (``system``,
            ``user``, ``cue``).
        curve_settings: ``tension.curves`` (:meth:`curves.CurveSettings.from_config`).
        judge_model: The LLM judge's model settings (``ModelSpec.scoring_settings``; ignored by
            the embedding judge).
        config_models: The config's ``models:`` (a served judge's runtime settings).
        model_path: The LLM judge's GGUF (None when served or for the embedding judge).
        calibration: The forecaster's calibration table (:data:`tables.TENSION_CALIBRATION`),
            read when the embedding judge's threshold is null (:func:`embedding_threshold`).
        threads: CPU threads of the encoder or the model.

    Returns:
        ``(verdicts, rates, stories)``: :func:`judge_by_embedding` or :func:`judge_with_model`
        (the model opened through :func:`storyflow.lm.connect.open_model`),
        :func:`curves.cut_no_rates` and :func:`curves.story_statistics`.
    """
    if settings["kind"] == EMBEDDING:
        threshold = embedding_threshold(settings, calibration)
        encode = load_encoder(settings["model"], threads=threads, key="tension.embedding.model")
        verdicts = judge_by_embedding(endings, cuts, encode, threshold, settings["chunk_words"])
    else:
        model = open_model(
            job_spec(judge_model, config_models), model_path, n_threads=threads, share_prefix=True
        )
        verdicts = judge_with_model(endings, cuts, model, settings)
    log.info("%s", verdicts["status"].value_counts().to_dict())
    rates = curves.cut_no_rates(verdicts)
    stories = curves.story_statistics(rates, curves.CurveSettings.from_config(curve_settings))
    return verdicts, rates, stories
