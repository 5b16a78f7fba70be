"""A language-model stage's cost in requests and tokens, counted before any model is loaded.

Each measure that asks a model questions counts its own stages (``storyflow.measures.<measure>
.cost``); :mod:`storyflow.estimate` adds the corpus and the time at the configured rates.
"""

from __future__ import annotations

from typing import NamedTuple

#: Tokens per English word of the models' BPE tokenizers (≈ 1.3 for prose; a rough figure:
#: the estimate does not load any tokenizer).
TOKENS_PER_WORD = 1.3


def tokens(words: float) -> float:
    """The tokens ``words`` words come to (:data:`TOKENS_PER_WORD`)."""
    return words * TOKENS_PER_WORD


class StageCost(NamedTuple):
    """One stage of a measure with one model on one corpus: ``requests`` (prompts or questions
    sent), ``prompt_tokens`` (tokens the model evaluates), ``generated_tokens`` (tokens it writes;
    upper bounds where the work depends on answers not yet given) and ``shrink``, the config
    keys that lower them (named when the estimate exceeds ``cost.max_hours``)."""

    stage: str
    model: str
    requests: float
    prompt_tokens: float
    generated_tokens: float
    shrink: str
