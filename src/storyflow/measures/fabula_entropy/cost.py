"""What the fabula-entropy readers will be asked (the cost estimate, :mod:`storyflow.estimate`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from storyflow.lm.budget import StageCost, tokens


def cost_rows(stories: pd.DataFrame, settings: Mapping[str, Any]) -> Iterator[StageCost]:
    """Each reader's closed-choice answers: every question of every version of a passage (the
    passage once per version thanks to the shared prefix, then each question, ~20 tokens).

    ``stories``: per story its sentences' word counts (``per``); ``settings``: ``items`` (the
    item settings: ``questions``, ``controls``, ``kinds``, ``ewc_k``, ``wrong_ending``,
    ``lines``), ``readers`` and ``variants`` (prompt variants per reader), as
    ``storyflow.plan.fabula_entropy.cost_settings`` gives them."""
    items, variants = settings["items"], int(settings["variants"])
    per_story = int(items["questions"]) + 2 * int(items["controls"])
    versions = 0
    for kind in items["kinds"]:
        versions += 2 + int(items["wrong_ending"]) if kind == "etc" else 1 + len(items["ewc_k"])
    lines = items["lines"]
    passage = sum(sum(per[:lines] if lines else per) for per in stories["per"])  # words read
    requests = len(stories) * versions * per_story * variants
    prompt = tokens(passage * versions * variants) + requests * 20
    for reader in settings["readers"]:
        yield StageCost(
            "answer questions", reader, requests, prompt, 0.0,
            "fabula_entropy.questions, .lines, .variants, .readers",
        )  # fmt: skip
