"""What the language-model stages will cost (storyflow.estimate): the settings their size
depends on, each measure's from its planning module (``cost_settings``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storyflow.lm.rates import model_rates
from storyflow.plan.layout import Layout
from storyflow.plan.registry import MEASURES

#: Its logs: ``logs/cost/...`` (the table itself: :data:`storyflow.plan.layout.LM_COST`).
OUT = Layout("cost")


def rates(config: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    """Per model with a CPU rate, its ``prompt`` and ``generate`` rates (tokens/s; None where it
    has one and not the other): :func:`storyflow.lm.rates.model_rates`, so a packaged model has
    its measured rates whatever the config calls it."""
    out = {}
    for name, rate in model_rates(config).items():
        prompt, generate = rate.prompt, rate.generate
        if prompt or generate:
            out[name] = {
                "prompt": prompt.tokens_per_second if prompt else None,
                "generate": generate.tokens_per_second if generate else None,
            }
    return out


def estimate_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """How the language-model cost estimate turns tokens into time: per model, its measured
    ``rates`` (tokens/s; :func:`rates`), and the ``max_hours`` past which it warns (``cost``)."""
    return {"rates": rates(config), "max_hours": config["cost"]["max_hours"]}


def settings(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per corpus, the language-model stages that read it with their models and the settings
    their size depends on, by measure (in the registry's order): the params of rule
    estimate_lm_cost (``storyflow.estimate``)."""
    settings: dict[str, dict[str, Any]] = {}
    for measure in MEASURES:
        for corpus, block in measure.cost_settings(config).items():
            settings.setdefault(corpus, {})[measure.name] = block
    return settings
