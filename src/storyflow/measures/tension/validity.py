"""Validity checks of the tension measure's models: can the forecaster forecast, can each judge
judge? (docs/tension.md, "Validity"; the shared statistics: :mod:`storyflow.validity`.)

The items with known answers are the forecaster's calibration forecasts of ROCStories stories
(:mod:`storyflow.measures.tension.calibration`): K endings sampled from each story's four
context sentences, each with the story's right ending and a wrong one. The checks are computed
in the run, before the group comparisons that rest on them (rule ``check_tension_validity``
writes ``results/tension/tables/validity/<forecaster>.csv``; ``summarize_tension`` reads it).

- **Forecaster** (role ``forecaster``, model = the forecaster), check ``pairwise_accuracy``: the
  share of its forecasts with text (every calibration story) whose sentence-embedding cosine
  with the right ending exceeds that with the wrong ending (0-1; chance 0.5). Interval:
  percentile bootstrap over stories, each resampled with all its forecasts. Passes when the
  interval's lower end is above ``validity.forecaster.min_pairwise`` (0.5): a forecaster at
  chance predicts nothing of the story, and its no-rates describe the model, not the story.
- **Judge** (role ``judge``, model = the judge, one set of rows per forecaster whose forecasts
  it judged: the check names end in ``[<forecaster>]``), on the forecasts of the ``held-out``
  half of the stories, each judged against the right ending (a match is correct) and against
  the wrong ending (no match is correct):

  - ``balanced_accuracy[<f>]``: the mean of the two hit rates (share of right-ending verdicts
    that match, share of wrong-ending verdicts that do not; 0-1, chance 0.5, a judge that
    always says the same scores 0.5); passes when it reaches
    ``validity.judge.min_balanced_accuracy`` (0.6);
  - ``balanced_accuracy_vs_chance[<f>]``: the same value; passes when its bootstrap interval's
    lower end is above 0.5 (better than a coin beyond doubt, not only at this sample);
  - ``pairwise_accuracy[<f>]``: the share of forecasts the judge scores higher against the
    right ending than against the wrong one (a ranking, blind to the judge's threshold; 0-1,
    chance 0.5); passes when its bootstrap interval's lower end is above
    ``validity.judge.min_pairwise`` (0.5).

  The embedding judge decides with its threshold fitted on the ``fit`` half (or the configured
  ``tension.embedding.threshold``); an LLM judge with P(Y) > 0.5 (fitted on nothing).

A (forecaster, judge) result is *valid* when the forecaster and the judge (on that forecaster's
forecasts) passed every check; :func:`storyflow.measures.tension.verdict.labels` says which failed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from storyflow import bootstrap, tables, validity
from storyflow.measures.tension.judges import EMBEDDING, EMPTY_FORECAST
from storyflow.measures.tension.verdict import MEASURE
from storyflow.settings import FromParams

CORPUS = "rocstories"
#: Chance level of a balanced or pairwise accuracy.
CHANCE = 0.5


@dataclass(frozen=True)
class CheckSettings(bootstrap.Resampling, FromParams):
    """Thresholds and interval settings of the checks (config ``validity`` and
    the ``stats`` block): ``confidence`` level, ``resamples`` and ``seed`` of the bootstrap
    (:class:`storyflow.bootstrap.Resampling`), ``min_pairwise`` (forecaster),
    ``min_balanced_accuracy`` and ``min_judge_pairwise`` (judge)."""

    WHERE = "validity and stats.confidence"

    min_pairwise: float
    min_balanced_accuracy: float
    min_judge_pairwise: float


def _share(units: Sequence[tuple[int, int]]) -> float:
    """Successes / trials summed over units of ``(successes, trials)``."""
    wins, n = np.sum(np.asarray(units, float), axis=0) if len(units) else (0.0, 0.0)
    return float(wins / n) if n else math.nan


def forecaster_check(
    cosines: pd.DataFrame, forecaster: str, settings: CheckSettings
) -> dict[str, Any]:
    """The forecaster's ``pairwise_accuracy`` row (:data:`tables.VALIDITY`) from its
    calibration cosines (:data:`tables.TENSION_CALIBRATION_COSINES`, both halves)."""
    mine = cosines[cosines["model"] == forecaster]
    wins = mine.assign(win=mine["right"] > mine["wrong"])
    units = [(int(g["win"].sum()), len(g)) for _, g in wins.groupby("story_id", sort=False)]
    stories = mine.drop_duplicates("story_id")
    echo = float((stories["context_right"] > stories["context_wrong"]).mean())
    return validity.check(
        measure=MEASURE,
        corpus=CORPUS,
        role="forecaster",
        model=forecaster,
        name="pairwise_accuracy",
        value=_share(units),
        ci=settings.units_interval(units, _share),
        threshold=settings.min_pairwise,
        rule=validity.RULES[1],
        n=len(mine),
        detail=(
            f"share of {len(mine)} forecasts with text ({len(units)} ROCStories stories, up to "
            f"{max((u[1] for u in units), default=0)} per story, from the four context "
            "sentences) whose sentence-embedding cosine with the right ending exceeds that with "
            "the wrong one; "
            f"chance 0.5; the context sentences themselves, as a forecast: {echo:.3f} of the "
            "stories (a forecaster that repeats the story so far); CI: percentile bootstrap over "
            "stories"
        ),
    )


def embedding_verdicts(cosines: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """The embedding judge on the held-out half's forecasts (:func:`judge_rows`' input):
    scores are the cosines, a match is a cosine at or above ``threshold``."""
    held = cosines[cosines["half"] == "held-out"]
    return pd.DataFrame(
        {
            "story_id": held["story_id"].to_numpy(),
            "sample": held["sample"].to_numpy(),
            "right_score": held["right"].to_numpy(),
            "wrong_score": held["wrong"].to_numpy(),
            "right_match": pd.array(held["right"] >= threshold, dtype="boolean"),
            "wrong_match": pd.array(held["wrong"] >= threshold, dtype="boolean"),
        }
    )


def model_verdicts(judgments: pd.DataFrame) -> pd.DataFrame:
    """An LLM judge's calibration verdicts (:data:`tables.TENSION_CALIBRATION_JUDGMENTS`) as
    :func:`judge_rows`' input: one row per forecast, score and match against either ending
    (missing where the judge gave no verdict)."""
    keys = ["story_id", "sample"]
    judgments = judgments[judgments["status"] != EMPTY_FORECAST]  # no text: not asked
    wide = judgments.pivot_table(
        index=keys, columns="ending", values=["score", "match"], aggfunc="first", dropna=False
    )
    out = pd.DataFrame(index=wide.index)
    for ending in ("right", "wrong"):
        out[f"{ending}_score"] = wide[("score", ending)].astype(float)
        out[f"{ending}_match"] = pd.array(wide[("match", ending)], dtype="boolean")
    return out.reset_index()


def _balanced(units: Sequence[tuple[int, int, int, int]]) -> float:
    hits, n_right, rejects, n_wrong = np.sum(np.asarray(units, float), axis=0)
    if not n_right or not n_wrong:
        return math.nan
    return float((hits / n_right + rejects / n_wrong) / 2)


def _judge_counts(
    verdicts: pd.DataFrame,
) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, int]]]:
    """Per story (in order of appearance): (matches against the right ending, verdicts
    against it, no-matches against the wrong ending, verdicts against it), and (forecasts
    scored higher against the right ending than the wrong one, forecasts scored against
    both)."""
    units, pairs = [], []
    for _, g in verdicts.groupby("story_id", sort=False):
        right, wrong = g["right_match"].dropna(), g["wrong_match"].dropna()
        units.append((int(right.sum()), len(right), int((~wrong.astype(bool)).sum()), len(wrong)))
        both = g.dropna(subset=["right_score", "wrong_score"])
        pairs.append((int((both["right_score"] > both["wrong_score"]).sum()), len(both)))
    return units, pairs


def _judge_detail(
    n: int, forecaster: str, units: Sequence[tuple[int, int, int, int]], decision: str
) -> str:
    """The detail of a judge's balanced-accuracy checks: ``n`` forecasts over the stories of
    ``units`` (:func:`_judge_counts`), the ``decision`` rule and the two rates (shares)."""
    totals = np.sum(np.asarray(units, float), axis=0) if units else np.zeros(4)
    rates = (
        f"match rate against right endings {totals[0] / totals[1]:.3f}, no-match rate "
        f"against wrong endings {totals[2] / totals[3]:.3f}"
        if totals[1] and totals[3]
        else "no verdict against the right or the wrong endings"
    )
    return (
        f"{n} held-out forecasts of {forecaster} ({len(units)} ROCStories stories), each judged "
        f"against the right ending (should match) and the wrong one (should not); {decision}; "
        f"{rates}; CI: percentile bootstrap over stories"
    )


def judge_rows(
    verdicts: pd.DataFrame,
    forecaster: str,
    judge: str,
    settings: CheckSettings,
    decision: str,
) -> list[dict[str, Any]]:
    """A judge's rows (:data:`tables.VALIDITY`) on one forecaster's held-out forecasts.

    ``verdicts``: one row per forecast: story_id, right_score, wrong_score (the judge's score
    against either ending), right_match, wrong_match (its verdicts; missing = none);
    ``decision``: how the verdict was made, in words (for the detail)."""
    units, pairs = _judge_counts(verdicts)
    value = _balanced(units) if units else math.nan
    ci = settings.units_interval(units, _balanced)
    n = len(verdicts)
    detail = _judge_detail(n, forecaster, units, decision)
    balanced = [  # one balanced accuracy, decided two ways
        validity.check(
            measure=MEASURE,
            corpus=CORPUS,
            role="judge",
            model=judge,
            name=f"{name}[{forecaster}]",
            value=value,
            ci=ci,
            threshold=threshold,
            rule=rule,
            n=n,
            detail=detail,
        )
        for name, threshold, rule in (
            ("balanced_accuracy", settings.min_balanced_accuracy, validity.RULES[0]),
            ("balanced_accuracy_vs_chance", CHANCE, validity.RULES[1]),
        )
    ]
    return [*balanced, _judge_pairwise(pairs, forecaster, judge, settings)]


def _judge_pairwise(
    pairs: Sequence[tuple[int, int]], forecaster: str, judge: str, settings: CheckSettings
) -> dict[str, Any]:
    """The judge's pairwise-accuracy row (:data:`tables.VALIDITY`): the share of forecasts it
    scores higher against the right ending than the wrong one (``pairs`` per story:
    :func:`_judge_counts`), with its bootstrap interval over stories."""
    n_pairs = sum(p[1] for p in pairs)
    return validity.check(
        measure=MEASURE,
        corpus=CORPUS,
        role="judge",
        model=judge,
        name=f"pairwise_accuracy[{forecaster}]",
        value=_share(pairs),
        ci=settings.units_interval(pairs, _share),
        threshold=settings.min_judge_pairwise,
        rule=validity.RULES[1],
        n=n_pairs,
        detail=(
            f"share of {n_pairs} held-out forecasts of {forecaster} with a score against both "
            f"endings that the judge scores higher against the right ending ({len(pairs)} "
            "ROCStories stories; a ranking, blind to the judge's threshold; chance 0.5); CI: "
            "percentile bootstrap over stories"
        ),
    )


def embedding_threshold(fixed: float | None, calibration: pd.DataFrame) -> tuple[float, str]:
    """The embedding judge's cosine threshold and where it comes from (for the checks' detail):
    ``tension.embedding.threshold`` when the config fixes it (``fixed``), else the one fitted on
    the fit half (``calibration``: :data:`tables.TENSION_CALIBRATION`)."""
    if fixed is not None:
        return float(fixed), "tension.embedding.threshold"
    return float(calibration["threshold"].iloc[0]), "fitted on the fit half"


def checks(
    forecaster: str,
    cosines: pd.DataFrame,
    threshold: tuple[float, str],
    model_judgments: Mapping[str, pd.DataFrame],
    judges: Sequence[str],
    settings: CheckSettings,
) -> pd.DataFrame:
    """Every check of one forecaster and of each judge on its forecasts
    (:data:`tables.VALIDITY`).

    ``cosines``: the forecaster's calibration cosines; ``threshold``: the embedding judge's
    cosine threshold and where it comes from (:func:`embedding_threshold`, for the detail);
    ``model_judgments``: LLM judge → its calibration verdicts on this forecaster's forecasts;
    ``judges``: the judges configured (``embedding`` and/or LLM judges), in order."""
    cosine_threshold, threshold_source = threshold
    rows = [forecaster_check(cosines, forecaster, settings)]
    for judge in judges:
        if judge == EMBEDDING:
            verdicts = embedding_verdicts(cosines[cosines["model"] == forecaster], cosine_threshold)
            decision = f"match when the cosine >= {cosine_threshold:.4f} ({threshold_source})"
        else:
            verdicts = model_verdicts(model_judgments[judge])
            decision = "match when P(Y) > 0.5 (no fit)"
        rows += judge_rows(verdicts, forecaster, judge, settings, decision)
    return validity.frame(rows)


def read_checks(paths: Sequence[str | Path]) -> pd.DataFrame:
    """The forecasters' validity tables, concatenated (an empty table for no path)."""
    if not paths:
        return tables.VALIDITY.empty()
    return tables.read_all(tables.VALIDITY, paths)
