"""Closed-choice answers: how probable each of a fixed set of answers is after a prompt.

No text is generated. For a prompt x and options a_1..a_n (strings such as ``"Yes"``/``"No"`` or
``"A"``..``"D"``), the model scores each whole option as a continuation of the prompt:

    ln P(a_j | x) = Σ_t ln p(a_j[t] | x, a_j[:t])      (natural log, nats; every token of a_j)

where a_j's tokens are the option text tokenized on its own (no special tokens) and appended to
the prompt's tokens. An option may be given by several *variants* (``{"yes": ["Yes", " yes",
"YES"]}``): its probability is the sum of its variants', ``P(option | x) = Σ_v P(v | x)``. Then

    probs_j = P(a_j | x) / Σ_k P(a_k | x)      (the choice among the options: sums to 1)
    mass    = Σ_k P(a_k | x)                   (how much of the model's probability the option
                                                set gets; a low mass flags a prompt the model
                                                does not read as asking for these answers)

The log-probabilities come from any :class:`storyflow.lm.backends.Scorer` (``answer``,
``answers``) or from an OpenAI-compatible server (``storyflow.lm.backends.http``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from storyflow.errors import StoryflowError
from storyflow.lm.backends import Scorer, score_requests
from storyflow.lm.prompts import prompt_tokens

Options = Sequence[str] | Mapping[str, Sequence[str]]
"""Answer options: strings (each its own only variant), or option name → its variants."""


@dataclass(frozen=True)
class ClosedAnswer:
    """The model's answer distribution over a closed set of options (see the module docstring).

    ``options``: the option names, in the order given. ``logprobs``: ln P(option | prompt) in
    nats (with variants: ln of the sum of the variants' probabilities). ``probs``: the options'
    probabilities renormalised over the set (sum to 1). ``mass``: Σ P(option | prompt), the share
    of the model's probability on the set (0..1). ``variants`` and ``variant_logprobs``: each
    option's variant strings and their ln P(variant | prompt), in nats.
    """

    options: tuple[str, ...]
    logprobs: tuple[float, ...]
    probs: tuple[float, ...]
    mass: float
    variants: tuple[tuple[str, ...], ...]
    variant_logprobs: tuple[tuple[float, ...], ...]

    @property
    def best(self) -> str:
        """The most probable option (the first one among ties)."""
        return self.options[int(np.argmax(self.logprobs))]

    @classmethod
    def from_variant_logprobs(
        cls,
        options: Sequence[str],
        variants: Sequence[Sequence[str]],
        variant_logprobs: Sequence[Sequence[float]],
    ) -> ClosedAnswer:
        """Combine variants (log-sum-exp) and renormalise over the options."""
        option_lps = np.array([np.logaddexp.reduce(np.asarray(v, float)) for v in variant_logprobs])
        total = float(np.logaddexp.reduce(option_lps))
        return cls(
            options=tuple(options),
            logprobs=tuple(float(x) for x in option_lps),
            probs=tuple(float(x) for x in np.exp(option_lps - total)),
            mass=float(np.exp(total)),
            variants=tuple(tuple(v) for v in variants),
            variant_logprobs=tuple(tuple(float(x) for x in v) for v in variant_logprobs),
        )


def option_variants(options: Options) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """(option names, each option's variants), checked: at least two options, every variant a
    non-empty string appearing once in the whole set."""
    if isinstance(options, str):
        raise StoryflowError(
            f"answer options must be a list of strings, not the string {options!r}"
        )
    if isinstance(options, Mapping):
        names = tuple(options)
        variants = tuple(
            (v,) if isinstance(v, str) else tuple(v) for v in (options[n] for n in names)
        )
    else:
        names = tuple(options)
        variants = tuple((name,) for name in names)
    if len(names) < 2:
        raise StoryflowError(f"a closed-choice question needs at least two options, not {names}")
    flat = [v for group in variants for v in group]
    if any(not isinstance(v, str) or not v for v in flat) or any(not g for g in variants):
        given = dict(zip(names, variants, strict=True))
        raise StoryflowError(f"every answer option needs non-empty strings: {given}")
    repeated = sorted({v for v in flat if flat.count(v) > 1})
    if repeated:
        raise StoryflowError(f"answer strings appear more than once: {repeated}")
    return names, variants


def prompt_ids(scorer: Any, prompt: Sequence[int] | str) -> list[int]:
    """Token ids of ``prompt``: given ids as they are; a text tokenized as a llama.cpp server
    would (:func:`storyflow.lm.prompts.prompt_tokens`) with the scorer's llama.cpp tokenizer."""
    if not isinstance(prompt, str):
        ids = [int(t) for t in prompt]
    else:
        llm = getattr(scorer, "llm", None) or getattr(getattr(scorer, "vocab", None), "llm", None)
        if llm is None:
            raise StoryflowError(
                f"{type(scorer).__name__} has no llama.cpp tokenizer: give the prompt as token ids"
            )
        ids = prompt_tokens(llm, prompt)
    if not ids:
        raise StoryflowError("the prompt is empty: a closed-choice question needs a prompt")
    return ids


def answer(scorer: Scorer, prompt: Sequence[int] | str, options: Options) -> ClosedAnswer:
    """The answer distribution over ``options`` after ``prompt`` (token ids or text)."""
    return answers(scorer, [prompt], options)[0]


def answers(
    scorer: Scorer, prompts: Sequence[Sequence[int] | str], options: Options
) -> list[ClosedAnswer]:
    """One :class:`ClosedAnswer` per prompt, all with the same options.

    Every (prompt, variant) pair is one scoring request; the requests of a prompt are sent
    together, so a scorer that caches the prompt's state (``LlamaCppScorer``) evaluates the prompt
    once and each variant on top of it, and a scorer with ``logprobs_batch`` gets all requests
    in one call.
    """
    names, variants = option_variants(options)
    variant_ids = {v: scorer.tokenize(v) for group in variants for v in group}
    empty = [v for v, ids in variant_ids.items() if not ids]
    if empty:
        raise StoryflowError(f"answer strings without tokens: {empty}")
    ids = [prompt_ids(scorer, p) for p in prompts]
    requests = [(p, variant_ids[v]) for p in ids for group in variants for v in group]
    totals = iter([float(lp.sum()) for lp in score_requests(scorer, requests)])
    return [
        ClosedAnswer.from_variant_logprobs(
            names, variants, [[next(totals) for _ in group] for group in variants]
        )
        for _ in ids
    ]


@dataclass
class ScorerAnswerer:
    """Closed-choice answers read from a scorer's log-probabilities (:func:`answers`)."""

    scorer: Scorer

    def answer(self, prompt: Sequence[int] | str, options: Options) -> ClosedAnswer:
        return self.answers([prompt], options)[0]

    def answers(
        self, prompts: Sequence[Sequence[int] | str], options: Options
    ) -> list[ClosedAnswer]:
        return answers(self.scorer, prompts, options)
