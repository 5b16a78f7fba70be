"""What the plot-hole stage will ask its models (the cost estimate, :mod:`storyflow.estimate`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from storyflow.lm.budget import StageCost, tokens
from storyflow.measures.plot_holes.acts import act_bounds

#: Facts per story the cost estimate assumes when the model maker keeps every fact of act 1
#: (``plot_holes.model_maker.max_propositions: null``), whose number is known only after it ran.
ASSUMED_FACTS = 10


def cost_rows(stories: pd.DataFrame, settings: Mapping[str, Any]) -> Iterator[StageCost]:
    """Detection (every story shown, and a flawed version of each: an upper bound), the NLI
    baseline's sentence pairs and the model maker's steps, on the stories the stage edits.

    ``stories``: per story its sentence count ``n``, ``words`` and its sentences' word counts
    ``per``; ``settings``: ``block`` (the stage's settings its size depends on) and ``models``
    (``detectors``, ``nli``, ``maker``), as ``storyflow.plan.plot_holes.cost_settings`` gives
    them."""
    block, models = settings["block"], settings["models"]
    cap = block["max_words"]
    fits = stories[
        (stories["n"] >= block["min_sentences"])
        & (stories["words"] <= (np.inf if cap is None else cap))
    ]
    yield from _detection(fits, block, models["detectors"])
    yield from _nli(fits, block, models["nli"])
    if models["maker"]:
        yield _maker(fits, block["model_maker"], models["maker"])


def _detection(
    fits: pd.DataFrame, block: Mapping[str, Any], detectors: list[str]
) -> Iterator[StageCost]:
    words = float(fits["words"].sum())
    shown = 2 * len(fits)
    detection = block["detection"]
    paper = detection["format"] == "paper"
    generated = detection["reasoning_tokens"] if paper else detection["max_tokens"]
    for model in detectors:
        yield StageCost(
            "detect", model, shown, 1.2 * tokens(2 * words), shown * generated,
            "plot_holes.max_words, plot_holes.detectors, detection.format",
        )  # fmt: skip


def _nli(
    fits: pd.DataFrame, block: Mapping[str, Any], classifiers: list[str]
) -> Iterator[StageCost]:
    pairs = words_in_pairs = 0.0
    for n, per in zip(fits["n"], fits["per"], strict=True):
        if block["nli"]["pairs"] == "all":
            count = n * (n - 1)
        else:  # act 1 x acts 2-3, acts as the stage cuts them
            bounds = act_bounds(n, block["min_sentences"])
            assert bounds is not None  # fits: n >= min_sentences >= 3 (the config schema)
            act1 = bounds[0]
            count = act1 * (n - act1)
        pairs += 2 * count
        words_in_pairs += 2 * count * 2 * float(np.mean(per))
    for model in classifiers:
        yield StageCost(
            "nli pairs", model, pairs, tokens(words_in_pairs), 0.0,
            "plot_holes.nli.pairs (act1_later), plot_holes.nli.models",
        )  # fmt: skip


def _maker(fits: pd.DataFrame, m: Mapping[str, Any], maker: str) -> StageCost:
    # null = every fact of act 1 (the paper): the lists' length is unknown before the run
    facts = int(m["max_propositions"] or ASSUMED_FACTS)
    attempts = int(m["attempts"] or facts)
    relevance = 1 if m["relevance"] == "reasoned" else facts
    steps = 1 + int(m["acts"] == "model") + relevance + attempts * (1 + int(m["judge_samples"]))
    story = tokens(float(fits["words"].sum()))
    answers = 1 + int(m["relevance"] == "reasoned")  # the list, and the reasoned scores
    generated = len(fits) * answers * int(m["max_tokens"]) + attempts * (
        1.25 * story + len(fits) * (64 + int(m["judge_samples"]) * int(m["judge_max_tokens"]))
    )
    return StageCost(
        "make flawed stories", maker, len(fits) * steps, story * steps, generated,
        "plot_holes.model_maker.attempts, .judge_samples",
    )  # fmt: skip
