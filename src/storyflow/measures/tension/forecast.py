"""Forecasts: K endings sampled from the story so far, at every cut.

The forecaster sees the configured prompt (``tension.prompts``; Sui et al.'s own forecast prompt
is not in the reading of the paper storyflow has, ``hundred_endings_tension.txt``, so the
schema's text is storyflow's): with a chat template (instruct models) a system message and a
user message holding the prefix; base models get the same texts as a plain frame ending in a cue
line (``"In two or three sentences, this is how the story ends:"``) that the sample continues.
The K endings of one cut are one batch sharing the prompt (the sampler decodes the prompt once);
sample k of a cut is seeded by ``(cut seed, k)``, and the cut seed is drawn from ``(seed, story
id, cut)`` (:func:`cut_seed`), so a story's endings do not depend on the other stories of the
run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.lm.connect import LanguageModel
from storyflow.lm.prompts import Prompt
from storyflow.lm.sampling import Sampler, SamplingSettings
from storyflow.progress import LoggedBar
from storyflow.seeds import item_rng
from storyflow.settings import settings_from

log = logging.getLogger(__name__)

PREFIX_FIELD = "{prefix}"


@dataclass(frozen=True)
class ForecastPrompt:
    """The forecast prompt: ``system`` and ``user`` texts (``user`` holds ``{prefix}``); ``cue``
    ends the plain frame of base models."""

    system: str
    user: str
    cue: str

    def __post_init__(self) -> None:
        if self.user.count(PREFIX_FIELD) != 1:
            raise StoryflowError(
                f"config: tension.prompts.user must contain {PREFIX_FIELD} exactly once "
                "(where the story so far goes)"
            )

    def messages(self, prefix: str) -> list[dict[str, str]]:
        """The system and user turns for the story so far ``prefix``."""
        messages = [{"role": "user", "content": self.user.replace(PREFIX_FIELD, prefix)}]
        if self.system:
            messages.insert(0, {"role": "system", "content": self.system})
        return messages

    def render(self, model: LanguageModel, prefix: str) -> Prompt:
        """The prompt for the story so far ``prefix``, ending where the ending begins."""
        return model.render(self.messages(prefix), cue=self.cue)


def cut_seed(seed: int, story_id: str, cut: int) -> int:
    """The sampling seed of one cut: a 31-bit integer drawn from ``(seed, story id, cut)``."""
    return int(item_rng(seed, f"{story_id}:{cut}").integers(2**31))


def sampling_settings(block: Mapping[str, Any]) -> SamplingSettings:
    """The sampling settings of the validated config block ``tension.sampling`` (its ranges, and
    ``tension.k``'s, are the config schema's)."""
    return settings_from(SamplingSettings, block, where="tension.sampling")


def prompt_window(model: LanguageModel, prompts: Sequence[Prompt], max_tokens: int) -> int:
    """Context window that holds the longest prompt plus ``max_tokens`` (rounded up to 64)."""
    longest = max((model.count(p) for p in prompts), default=1)
    return -(-(longest + max_tokens + 1) // 64) * 64


def sample_endings(
    sampler: Sampler | LanguageModel,
    prompts: Sequence[Prompt],
    cuts: pd.DataFrame,
    k: int,
    settings: SamplingSettings,
) -> pd.DataFrame:
    """K endings per cut (:data:`tables.TENSION_ENDINGS`): ``prompts[i]`` is cut i's prompt.

    ``n_tokens``: generated tokens of the ending (forecaster's tokenizer); ``finish_reason``:
    ``eos``, ``stop`` or ``length`` (``max_tokens`` reached).
    """
    rows = []
    progress = LoggedBar(list(zip(cuts.itertuples(index=False), prompts, strict=True)), desc="cuts")
    for cut, prompt in progress:
        seed = cut_seed(settings.seed, cut.story_id, cut.cut)
        for sample in sampler.sample(prompt, k, replace(settings, seed=seed)):
            rows.append(
                tables.TENSION_ENDINGS.row(
                    story_id=cut.story_id,
                    story_type=cut.story_type,
                    model=cut.model,
                    cut=cut.cut,
                    sentence_idx=cut.sentence_idx,
                    pct=cut.pct,
                    sample=sample.index,
                    seed=seed,
                    text=sample.text.strip(),
                    n_tokens=len(sample.tokens),
                    finish_reason=sample.finish_reason,
                )
            )
    endings = tables.TENSION_ENDINGS.frame(rows)
    empty = int((endings["text"] == "").sum())
    if empty:
        log.warning(
            "%d of %d endings are empty (no text): they get no verdict", empty, len(endings)
        )
    return endings


def forecast_cuts(
    model: LanguageModel,
    cuts: pd.DataFrame,
    k: int,
    sampling: Mapping[str, Any],
    prompts: Mapping[str, str],
) -> pd.DataFrame:
    """K endings per cut from the forecaster ``model`` with the config's ``tension.sampling``
    and ``tension.prompts`` (:func:`sample_endings`); logs the generated tokens per second."""
    settings = sampling_settings(sampling)
    frame = ForecastPrompt(prompts["system"], prompts["user"], prompts["cue"])
    texts = [frame.render(model, prefix) for prefix in cuts["prefix"]]
    model.n_ctx = prompt_window(model, texts, settings.max_tokens)
    model.n_seq = min(k, int(sampling["n_seq"]))
    start = time.perf_counter()
    endings = sample_endings(model, texts, cuts, k, settings)
    seconds = time.perf_counter() - start
    generated = int(endings["n_tokens"].sum())
    log.info(
        "%s: %d endings of %d cuts in %.1f s: %d generated tokens (%.1f tokens/s), %d evaluated",
        model.name,
        len(endings),
        len(cuts),
        seconds,
        generated,
        generated / max(seconds, 1e-9),
        model.tokens_evaluated,
    )
    return endings
