"""What every language-model stage will cost, known before it is spent (docs/cost_and_failures.md).

Rule ``estimate_lm_cost`` runs on the corpora's sentence tables, before the stages' items exist,
and writes one row per corpus × stage × model (:data:`storyflow.tables.LM_COST`): the requests the
stage will send, the prompt tokens the model will evaluate, the tokens it will generate, and the
expected time at the model's configured rates (``cost.rates``: prompt and generated tokens per
second; no rate, no time). It is an estimate, not a plan:

* tokens are words × :data:`TOKENS_PER_WORD` (the models' own tokenizers are not loaded);
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
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.measures.plot_holes.acts import act_bounds
from storyflow.measures.tension.cuts import CutSettings, story_cuts

log = logging.getLogger(__name__)

#: Tokens per English word of the models' BPE tokenizers (≈ 1.3 for prose; a rough figure:
#: the estimate does not load any tokenizer).
TOKENS_PER_WORD = 1.3


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


def _tokens(words: float) -> float:
    return words * TOKENS_PER_WORD


def tension_rows(stories: pd.DataFrame, block: Mapping[str, Any], plan: Mapping[str, Any]):
    """Forecasting (one prompt per cut: the story up to it; K endings of ``max_tokens``) and each
    LLM judge (K closed-choice questions per cut: the remainder and one ending). The cuts are
    the stage's own (:func:`storyflow.measures.tension.cuts.story_cuts`), with words standing in
    for the forecaster's tokens."""
    k, gen = int(block["k"]), int(block["sampling"]["max_tokens"])
    settings = CutSettings.from_config(block["cuts"])
    prefix = remainder = n_cuts = 0.0
    for texts, per in zip(stories["texts"], stories["per"], strict=True):
        kept, _ = story_cuts(texts, per, settings)
        total = sum(per)
        n_cuts += len(kept)
        prefix += float(sum(words for _, _, words in kept))
        remainder += float(sum(total - words for _, _, words in kept))
    for model in plan["forecasters"]:
        yield ("tension", "forecast endings", model, n_cuts, _tokens(prefix), n_cuts * k * gen)
    judged = len(plan["forecasters"])  # a judge reads every forecaster's endings
    for judge in plan["judges"]:
        if judge != "embedding":
            prompt = judged * k * (_tokens(remainder) + n_cuts * gen)
            yield ("tension", "judge endings", judge, judged * n_cuts * k, prompt, 0.0)


def fabula_entropy_rows(stories: pd.DataFrame, items: Mapping[str, Any], readers: Sequence[str],
                        variants: int):  # fmt: skip
    """Each reader's closed-choice answers: every question of every version of a passage
    (the passage once per version thanks to the shared prefix, then each question)."""
    per_story = int(items["questions"]) + 2 * int(items["controls"])
    versions = 0
    for kind in items["kinds"]:
        versions += 2 + int(items["wrong_ending"]) if kind == "etc" else 1 + len(items["ewc_k"])
    lines = items["lines"]
    passage = sum(
        sum(per[:lines] if lines else per) for per in stories["per"]
    )  # words of the passages read
    requests = len(stories) * versions * per_story * variants
    prompt = _tokens(passage * versions * variants) + requests * 20
    for reader in readers:
        yield ("fabula_entropy", "answer questions", reader, requests, prompt, 0.0)


#: Facts per story the cost estimate assumes when the model maker keeps every fact of act 1
#: (``plot_holes.model_maker.max_propositions: null``), whose number is known only after it ran.
ASSUMED_FACTS = 10


def plot_hole_rows(stories: pd.DataFrame, block: Mapping[str, Any], models: Mapping[str, Any]):
    """Detection (every story shown, and a flawed version of each: an upper bound), the NLI
    baseline's sentence pairs and the model maker's steps, on the stories the stage edits."""
    cap = block["max_words"]
    fits = stories[
        (stories["n"] >= block["min_sentences"])
        & (stories["words"] <= (np.inf if cap is None else cap))
    ]
    words = float(fits["words"].sum())
    shown = 2 * len(fits)
    detection = block["detection"]
    paper = detection["format"] == "paper"
    generated = detection["reasoning_tokens"] if paper else detection["max_tokens"]
    for model in models["detectors"]:
        yield ("plot_holes", "detect", model, shown, 1.2 * _tokens(2 * words), shown * generated)
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
    for model in models["nli"]:
        yield ("plot_holes", "nli pairs", model, pairs, _tokens(words_in_pairs), 0.0)
    maker = models["maker"]
    if maker:
        m = block["model_maker"]
        # null = every fact of act 1 (the paper): the lists' length is unknown before the run
        facts = int(m["max_propositions"] or ASSUMED_FACTS)
        attempts = int(m["attempts"] or facts)
        relevance = 1 if m["relevance"] == "reasoned" else facts
        steps = 1 + int(m["acts"] == "model") + relevance + attempts * (1 + int(m["judge_samples"]))
        story = _tokens(words)
        prompt = story * steps
        answers = 1 + int(m["relevance"] == "reasoned")  # the list, and the reasoned scores
        gen = len(fits) * answers * int(m["max_tokens"]) + attempts * (
            1.25 * story + len(fits) * (64 + int(m["judge_samples"]) * int(m["judge_max_tokens"]))
        )
        yield ("plot_holes", "make flawed stories", maker, len(fits) * steps, prompt, gen)


def estimate(
    lengths: Mapping[str, pd.DataFrame], settings: Mapping[str, Any], rates: Mapping[str, Any]
) -> pd.DataFrame:
    """The cost table (:data:`tables.LM_COST`) of every corpus's language-model stages.

    ``lengths``: :func:`story_lengths` per corpus; ``settings``: per corpus, the stages that
    read it (``tension``, ``fabula_entropy``, ``plot_holes``: each the block and its models, as
    ``plan.cost.settings`` gives them); ``rates``: per model, ``prompt`` and ``generate``
    tokens per second (``cost.rates``)."""
    rows = []
    for corpus, stages in settings.items():
        stories = lengths[corpus]
        found = []
        if "tension" in stages:
            found += tension_rows(stories, stages["tension"]["block"], stages["tension"]["plan"])
        if "fabula_entropy" in stages:
            fei = stages["fabula_entropy"]
            found += fabula_entropy_rows(stories, fei["items"], fei["readers"], fei["variants"])
        if "plot_holes" in stages:
            holes = stages["plot_holes"]
            found += plot_hole_rows(stories, holes["block"], holes["models"])
        for measure, stage, model, requests, prompt, generated in found:
            rate = rates.get(model) or {}
            seconds = _seconds(prompt, generated, rate)
            rows.append(
                (corpus, measure, stage, model, int(requests), int(prompt), int(generated),
                 rate.get("prompt"), rate.get("generate"), seconds)
            )  # fmt: skip
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


#: What shrinks each stage, named in the ceiling's message.
SHRINK = {
    "forecast endings": "tension.k, tension.cuts.max_cuts, tension.sampling.max_tokens",
    "judge endings": "tension.k, tension.cuts.max_cuts, tension.judges",
    "answer questions": "fabula_entropy.questions, .lines, .variants, .readers",
    "detect": "plot_holes.max_words, plot_holes.detectors, detection.format",
    "nli pairs": "plot_holes.nli.pairs (act1_later), plot_holes.nli.models",
    "make flawed stories": "plot_holes.model_maker.attempts, .judge_samples",
}


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
        f"{r.corpus} {r.stage} with {r.model} ({_duration(r.expected_s)}: {SHRINK[r.stage]})"
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
