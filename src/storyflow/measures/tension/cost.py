"""What the tension stage will ask its models (the cost estimate, :mod:`storyflow.estimate`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from storyflow.lm.budget import StageCost, tokens
from storyflow.measures.tension.cuts import CutSettings, story_cuts


def cost_rows(stories: pd.DataFrame, settings: Mapping[str, Any]) -> Iterator[StageCost]:
    """Forecasting (one prompt per cut: the story up to it; K endings of ``max_tokens``) and each
    LLM judge (K closed-choice questions per cut: the remainder and one ending).

    ``stories``: per story its sentences' word counts (``per``) and texts (``texts``);
    ``settings``: ``block`` (``k``, ``sampling``, ``cuts``) and ``plan`` (``forecasters``,
    ``judges``), as ``storyflow.plan.tension.cost_settings`` gives them. The cuts are the
    stage's own (:func:`storyflow.measures.tension.cuts.story_cuts`), with words standing in for
    the forecaster's tokens."""
    block, plan = settings["block"], settings["plan"]
    k, gen = int(block["k"]), int(block["sampling"]["max_tokens"])
    cut_settings = CutSettings.from_config(block["cuts"])
    prefix = remainder = n_cuts = 0.0
    for texts, per in zip(stories["texts"], stories["per"], strict=True):
        kept, _ = story_cuts(texts, per, cut_settings)
        total = sum(per)
        n_cuts += len(kept)
        prefix += float(sum(words for _, _, words in kept))
        remainder += float(sum(total - words for _, _, words in kept))
    for model in plan["forecasters"]:
        yield StageCost(
            "forecast endings", model, n_cuts, tokens(prefix), n_cuts * k * gen,
            "tension.k, tension.cuts.max_cuts, tension.sampling.max_tokens",
        )  # fmt: skip
    judged = len(plan["forecasters"])  # a judge reads every forecaster's endings
    for judge in plan["judges"]:
        if judge != "embedding":
            prompt = judged * k * (tokens(remainder) + n_cuts * gen)
            yield StageCost(
                "judge endings", judge, judged * n_cuts * k, prompt, 0.0,
                "tension.k, tension.cuts.max_cuts, tension.judges",
            )  # fmt: skip
