"""What the language-model stages will cost (storyflow.estimate): the settings their size
depends on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.fabula_entropy as fabula_entropy
import storyflow.plan.plot_holes as plot_holes
import storyflow.plan.tension as tension


def settings(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per corpus, the language-model stages that read it with their models and the settings
    their size depends on: the params of rule estimate_lm_cost (``storyflow.estimate``)."""
    settings: dict[str, dict[str, Any]] = {}
    planned = tension.choices(config)
    for corpus in planned["corpora"]:
        block = {k: config["tension"][k] for k in ("k", "sampling", "cuts")}
        chosen = {k: planned[k] for k in ("forecasters", "judges")}
        settings.setdefault(corpus, {})["tension"] = {"block": block, "plan": chosen}
    fei = config["fabula_entropy"]
    if fei["enabled"]:
        readers = fabula_entropy.readers(config)
        for corpus in fabula_entropy.corpora(config):
            items = fabula_entropy.items(config, corpus)
            # only ROCStories has a wrong ending to swap in
            items["wrong_ending"] = items["wrong_ending"] and corpus == "rocstories"
            settings.setdefault(corpus, {})["fabula_entropy"] = {
                "items": items,
                "readers": readers,
                "variants": len(fei["variants"]),
            }
    holes = config["plot_holes"]
    if holes["enabled"]:
        models = {
            "detectors": plot_holes.detectors(config),
            "nli": plot_holes.nli_models(config),
            "maker": plot_holes.maker_model(config),
        }
        block = {
            "min_sentences": holes["min_sentences"],
            "max_words": holes["max_words"],
            "detection": holes["detection"],
            "nli": {"pairs": holes["nli"]["pairs"]},
            "model_maker": {k: v for k, v in holes["model_maker"].items() if k != "prompts"},
        }
        for corpus in plot_holes.corpora(config):
            settings.setdefault(corpus, {})["plot_holes"] = {"block": block, "models": models}
    return settings
