"""What every language-model stage will cost, known before it is spent (docs/cost_and_failures.md).

Rule ``estimate_lm_cost`` runs on the corpora's sentence tables, before the stages' items exist,
and writes one row per corpus × stage × model (:data:`storyflow.tables.LM_COST`): the requests the
stage will send, the prompt tokens the model will evaluate, the tokens it will generate, and the
expected time at the model's configured rates (``cost.rates``: prompt and generated tokens per
second; no rate, no time). It is an estimate, not a plan:

* tokens are words × :data:`storyflow.lm.budget.TOKENS_PER_WORD` (the models' own tokenizers
  are not loaded);
* each count is the stage's **upper bound** where the stage's work depends on answers not yet
  given (a localization after every "yes", a made flawed story for every story, every cut kept);
* the detectors' validation pool, the tension checks' held-out endings and the judge's
  calibration set, and prompt templates' own tokens, are not counted (each adds a fraction of its
  stage's figures).

With ``cost.max_hours`` set, a run whose estimate exceeds it stops before any model is asked, with
a message naming the biggest rows and the keys that shrink them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

import storyflow.plan.registry as registry
from storyflow import tables
from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)


def story_lengths(sentences: pd.DataFrame) -> pd.DataFrame:
    """Per story: ``n`` sentences, ``words``, each sentence's words (``per``, a list) and the
    sentences themselves (``texts``, a list)."""
    texts = sentences["text"].astype(str)
    words = texts.str.split().str.len()
    grouped = sentences.assign(words=words, texts=texts).groupby("story_id", sort=False)
    return pd.DataFrame(
        {
            "n": grouped["words"].size(),
            "words": grouped["words"].sum(),
            "per": grouped["words"].agg(list),
            "texts": grouped["texts"].agg(list),
        }
    )


def estimate(
    lengths: Mapping[str, pd.DataFrame], settings: Mapping[str, Any], rates: Mapping[str, Any]
) -> pd.DataFrame:
    """The cost table (:data:`tables.LM_COST`) of every corpus's language-model stages.

    ``lengths``: :func:`story_lengths` per corpus; ``settings``: per corpus, each measure that
    asks models questions of it with its settings (``plan.cost.settings``), counted by the
    measure's own :attr:`~storyflow.plan.registry.Measure.cost_rows`; ``rates``: per model,
    ``prompt`` and ``generate`` tokens per second (``cost.rates``)."""
    rows = []
    for corpus, stages in settings.items():
        for name, block in stages.items():
            count = registry.measure(name).cost_rows
            if count is None:
                raise TypeError(f"measure {name} gives cost settings but no cost_rows")
            for row in count(lengths[corpus], block):
                rate = rates.get(row.model) or {}
                rows.append(
                    tables.LM_COST.row(
                        corpus=corpus,
                        measure=name,
                        stage=row.stage,
                        model=row.model,
                        requests=int(row.requests),
                        prompt_tokens=int(row.prompt_tokens),
                        generated_tokens=int(row.generated_tokens),
                        prompt_rate=rate.get("prompt"),
                        generate_rate=rate.get("generate"),
                        expected_s=_seconds(row.prompt_tokens, row.generated_tokens, rate),
                        shrink=row.shrink,
                    )
                )
    return tables.LM_COST.frame(rows)


def _seconds(prompt: float, generated: float, rate: Mapping[str, Any]) -> float:
    """Expected seconds at ``rate``; NaN when a rate the row needs is unknown."""
    need_generate = generated > 0
    if not rate.get("prompt") or (need_generate and not rate.get("generate")):
        return math.nan
    return prompt / rate["prompt"] + (generated / rate["generate"] if need_generate else 0.0)


def summary(cost: pd.DataFrame) -> str:
    """Log lines: the total, then each row (biggest first)."""
    known = cost["expected_s"].notna()
    hours = cost.loc[known, "expected_s"].sum() / 3600
    lines = [
        f"language-model stages: {cost['requests'].sum():,} requests, "
        f"{cost['prompt_tokens'].sum():,} prompt tokens, {cost['generated_tokens'].sum():,} "
        f"generated tokens; expected {hours:.2f} h at the configured rates"
        + ("" if known.all() else f" ({(~known).sum()} rows without a rate: cost.rates)")
    ]
    for row in cost.sort_values("expected_s", ascending=False, na_position="last").itertuples():
        time = "no rate" if math.isnan(row.expected_s) else f"{row.expected_s / 60:.1f} min"
        lines.append(
            f"  {row.corpus} {row.stage} ({row.model}): {row.requests:,} requests, "
            f"{row.prompt_tokens:,} + {row.generated_tokens:,} tokens, {time}"
        )
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def check_ceiling(cost: pd.DataFrame, max_hours: float | None) -> None:
    """Stop when the expected hours exceed ``max_hours`` (None: no ceiling), naming the three
    biggest rows and the keys that shrink them."""
    if max_hours is None:
        return
    hours = float(cost["expected_s"].sum(skipna=True)) / 3600
    if hours <= max_hours:
        return
    top = cost.sort_values("expected_s", ascending=False).head(3)
    named = "; ".join(
        f"{r.corpus} {r.stage} with {r.model} ({_duration(r.expected_s)}: {r.shrink})"
        for r in top.itertuples()
    )
    raise StoryflowError(
        f"the language-model stages are expected to take {_duration(hours * 3600)}, more than "
        f"cost.max_hours ({max_hours:g} h). Biggest: {named}. Lower those settings, use a "
        "faster model or device (cost.rates), or raise cost.max_hours (results/lm_cost.csv "
        "lists every row)"
    )


def estimate_corpora(
    sentences: Mapping[str, str],
    settings: Mapping[str, Any],
    rates: Mapping[str, Any],
    max_hours: float | None,
) -> pd.DataFrame:
    """Rule estimate_lm_cost: the cost table of every corpus (``sentences``: corpus → its
    sentences table), logged row by row, then checked against ``max_hours``."""
    lengths = {
        corpus: story_lengths(tables.read(tables.SENTENCES, path, needs=("story_id", "text")))
        for corpus, path in sentences.items()
    }
    cost = estimate(lengths, settings, rates)
    for line in summary(cost).splitlines():
        log.info("%s", line)
    check_ceiling(cost, max_hours)
    return cost
