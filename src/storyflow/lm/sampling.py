"""Sampling text from a language model: settings, the token rule, seeding, stop strings.

This module is backend-independent. A backend (``LlamaCppSampler``, ``TransformersSampler``)
supplies logits rows; everything that decides *which* token follows lives here, so the sampling
rule is the same in every backend:

* **token choice** (:func:`choose_tokens`, every running sample's row at once): logits →
  divide by the temperature → softmax (float32) → tokens ranked by probability → nucleus
  (top-p) cut of the ranking → one uniform number from the sample's generator picks the token at
  that quantile of the ranked nucleus. Temperature 0 is greedy (argmax, no draw).
* **seeding** (:func:`sequence_rng`): sample k (0-based) draws from its own generator, seeded by
  ``(settings.seed, k)`` only, and each step consumes exactly one uniform number. So sample k
  gets the same random numbers whether it is drawn alone, in a batch of any size, or in another
  chunk; the texts are then equal whenever the backend's logits are equal (see docs/lm.md for
  how far that holds across batch compositions).
* **ends** (:class:`Continuation`): a sequence ends at the model's end-of-generation token
  (``eos``, the token is not part of the text), when the decoded text contains a stop string
  (``stop``: the text is cut before the first occurrence; the string may span tokens), or after
  ``max_tokens`` tokens (``length``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol

import numpy as np

from storyflow.errors import StoryflowError

RANKED_HEAD = 1024  # most probable tokens ranked before the rest of the vocabulary (see ranked)


@dataclass(frozen=True)
class SamplingSettings:
    """How to draw a continuation.

    ``temperature``: divides the logits (> 0; 0 = greedy, the most probable token each step).
    ``top_p``: nucleus share in (0, 1]: each step draws from the smallest set of most probable
    tokens whose probabilities (after the temperature) sum to at least ``top_p``; 1 = no cut.
    ``max_tokens``: most generated tokens per sample (>= 1). ``stop``: strings that end a sample
    (cut from its text). ``seed``: non-negative integer; sample k's random stream is seeded by
    ``(seed, k)``.

    Settings from the config (``tension.sampling``) are built with
    :func:`storyflow.settings.settings_from` and their ranges are the config schema's, checked
    once there; the defaults here are the sampler's neutral values (no temperature scaling, no
    nucleus cut, no stop string, seed 0) for callers that set only what they change (greedy
    decoding: ``temperature=0``), not defaults of any config key.
    """

    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 64
    stop: tuple[str, ...] = ()
    seed: int = 0


@dataclass(frozen=True)
class Sample:
    """One generated continuation.

    ``index``: k, the sample's 0-based number (its seed is ``(settings.seed, k)``). ``text``: the
    decoded continuation, cut before the first stop string. ``tokens``: the generated token ids
    (the end-of-generation token excluded; with a stop string, up to and including the token that
    completed it). ``finish_reason``: ``stop``, ``length`` or ``eos``.
    """

    index: int
    text: str
    tokens: tuple[int, ...]
    finish_reason: str


class Sampler(Protocol):
    """A model that draws ``k`` continuations of a prompt."""

    def sample(self, prompt: str, k: int, settings: SamplingSettings) -> list[Sample]:
        """Samples 0..k-1 of ``prompt`` (already rendered text, special tokens parsed)."""
        ...


def sequence_rng(seed: int, index: int) -> np.random.Generator:
    """The random generator of sample ``index``: depends only on (seed, index)."""
    return np.random.default_rng([seed, index])


def choose_token(
    logits: np.ndarray, temperature: float, top_p: float, rng: np.random.Generator
) -> int:
    """The next token id drawn from one logits row (:func:`choose_tokens` for one row, its
    uniform number drawn from ``rng``; temperature 0 draws nothing)."""
    u = 0.0 if temperature == 0 else rng.random()
    return int(choose_tokens(np.asarray(logits)[None, :], temperature, top_p, [u])[0])


def choose_tokens(
    logits: np.ndarray,
    temperature: float,
    top_p: float,
    uniforms: Sequence[float],
    workers: int = 1,
) -> np.ndarray:
    """The next token id of every row of ``logits`` (rows × vocabulary, unnormalised
    log-probabilities), row r drawn with the uniform number ``uniforms[r]`` in [0, 1).

    Temperature 0 returns each row's argmax (lowest id among ties). Otherwise, for each row:

    1. probabilities p ∝ exp(logits / temperature), in float32 (relative error of a probability
       about 1e-7);
    2. tokens ranked by p, largest first (ties: lower id first);
    3. nucleus: the shortest prefix of that ranking whose probabilities sum to at least
       ``top_p`` (``top_p = 1``: all tokens);
    4. u picks the token at quantile u of the nucleus: the first whose cumulative probability
       (in ranked order, renormalised over the nucleus) exceeds u.

    Drawing along the ranking (not the vocabulary order) keeps a draw stable under small changes
    of the logits (another backend, another batch): the boundaries between the likely tokens'
    intervals move by about the change in their own probabilities only. Each row is computed on
    its own, with the same operations whatever the other rows (``workers`` threads take rows in
    turn; numpy releases the GIL), so a sample's token depends on its own logits and uniform
    number alone: batched and one-at-a-time samples are equal wherever their logits are.
    Only the head of the ranking is sorted (:func:`ranked`), so a row costs a few passes over the
    vocabulary, not a sort of it.
    """
    rows = np.asarray(logits)
    if rows.ndim != 2 or len(uniforms) != len(rows):
        raise ValueError(f"logits {rows.shape} need one uniform number per row")
    if temperature == 0:
        return np.argmax(rows, axis=1).astype(np.int64)
    scale = np.float32(1 / temperature)

    def one(r: int) -> int:
        probs = np.multiply(rows[r], scale, dtype=np.float32)
        np.subtract(probs, probs.max(), out=probs)
        np.exp(probs, out=probs)  # unnormalised: exp(0) = 1 at the most probable token
        total = float(probs.sum())
        u = float(uniforms[r])
        if top_p < 1:
            ids, cumulative = ranked(probs, top_p * total)
            size = min(int(np.searchsorted(cumulative, top_p * total, side="left")) + 1, len(ids))
            ids, cumulative = ids[:size], cumulative[:size]
            target = u * cumulative[-1]
        else:
            ids, cumulative = ranked(probs, u * total)
            target = u * total
        return int(ids[min(int(np.searchsorted(cumulative, target, side="right")), len(ids) - 1)])

    if workers > 1 and len(rows) > 1:
        return np.fromiter(_pool(workers).map(one, range(len(rows))), np.int64, len(rows))
    return np.fromiter(map(one, range(len(rows))), np.int64, len(rows))


@cache
def _pool(workers: int) -> ThreadPoolExecutor:
    """A thread pool for the token choice, one per worker count, kept for the process."""
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="choose")


def ranked(probs: np.ndarray, mass: float) -> tuple[np.ndarray, np.ndarray]:
    """The head of the probability ranking: token ids sorted by probability (descending, ties by
    ascending id) and their running sums (float64), long enough that the sum exceeds ``mass``
    (or all ids). ``probs`` may be unnormalised (``mass`` in the same unit).

    Exact and usually fast: the h most probable tokens (with every token tied with the last of
    them) are the start of the full ranking, with the same running sums, so only they are sorted;
    h starts at ``RANKED_HEAD`` and grows eightfold until the head's sum exceeds ``mass``.
    """
    size = RANKED_HEAD
    while size < len(probs):
        floor = np.partition(probs, len(probs) - size)[len(probs) - size]
        head = np.flatnonzero(probs >= floor)
        ids = head[np.argsort(-probs[head], kind="stable")]
        cumulative = np.cumsum(probs[ids], dtype=np.float64)
        if cumulative[-1] > mass:
            return ids, cumulative
        size *= 8
    ids = np.argsort(-probs, kind="stable")
    return ids, np.cumsum(probs[ids], dtype=np.float64)


def first_stop(text: str, stops: Sequence[str]) -> int | None:
    """Index in ``text`` where the earliest stop string begins, or None when there is none."""
    found = [i for i in (text.find(s) for s in stops) if i >= 0]
    return min(found) if found else None


@dataclass
class Continuation:
    """The state of one sample while it is generated (see :meth:`push`)."""

    index: int
    settings: SamplingSettings
    decode: Callable[[Sequence[int]], str]
    end_ids: Collection[int]
    rng: np.random.Generator = field(init=False)
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    finish_reason: str | None = None

    def __post_init__(self) -> None:
        self.rng = sequence_rng(self.settings.seed, self.index)

    @property
    def running(self) -> bool:
        return self.finish_reason is None

    def uniform(self) -> float:
        """The sample's next uniform number (one per step; none when decoding greedily)."""
        return 0.0 if self.settings.temperature == 0 else float(self.rng.random())

    def push(self, logits: np.ndarray) -> int | None:
        """Draw the next token from ``logits``; the token to feed back, or None when finished."""
        s = self.settings
        return self.take(
            int(choose_tokens(logits[None, :], s.temperature, s.top_p, [self.uniform()])[0])
        )

    def take(self, token: int) -> int | None:
        """Append the drawn ``token``; the token to feed back, or None when finished."""
        s = self.settings
        if token in self.end_ids:
            self.finish_reason = "eos"
            return None
        self.tokens.append(token)
        self.text = self.decode(self.tokens)
        cut = first_stop(self.text, s.stop)
        if cut is not None:
            self.text = self.text[:cut]
            self.finish_reason = "stop"
        elif len(self.tokens) >= s.max_tokens:
            self.finish_reason = "length"
        return token if self.running else None

    def result(self) -> Sample:
        if self.finish_reason is None:
            raise RuntimeError(f"sample {self.index} is still running")
        return Sample(self.index, self.text, tuple(self.tokens), self.finish_reason)


Step = Callable[[Sequence[int], Sequence[int]], np.ndarray]
"""Feeds token ``tokens[i]`` to sequence ``slots[i]`` (one token each, appended after what the
sequence holds) and returns the next-token logits, one row per slot, in order."""


def generate(
    prompt_logits: np.ndarray,
    indices: Sequence[int],
    settings: SamplingSettings,
    decode: Callable[[Sequence[int]], str],
    end_ids: Collection[int],
    step: Step,
    workers: int = 1,
) -> list[Sample]:
    """Samples ``indices`` of one prompt, sample ``indices[j]`` running in the backend's slot j.

    ``prompt_logits`` is the next-token logits row after the prompt (every slot holds the
    prompt); each round draws one token for every running sample at once
    (:func:`choose_tokens`, ``workers`` threads) and feeds all of them to ``step`` together. A
    finished sample is not fed again.
    """
    states = [Continuation(k, settings, decode, end_ids) for k in indices]
    slots = list(range(len(states)))
    rows = np.broadcast_to(prompt_logits, (len(states), len(prompt_logits)))
    while slots:
        uniforms = [states[slot].uniform() for slot in slots]
        tokens = choose_tokens(rows, settings.temperature, settings.top_p, uniforms, workers)
        fed = [(slot, states[slot].take(int(t))) for slot, t in zip(slots, tokens, strict=True)]
        slots = [slot for slot, token in fed if token is not None]
        if slots:
            rows = step(slots, [token for _, token in fed if token is not None])
    return [state.result() for state in states]


def check_request(prompt_tokens: int, settings: SamplingSettings, n_ctx: int) -> None:
    """Fail clearly unless a prompt of ``prompt_tokens`` tokens (>= 1) and ``max_tokens`` new
    tokens fit a window of ``n_ctx`` tokens."""
    if prompt_tokens < 1:
        raise StoryflowError("the prompt is empty: sampling needs at least one token")
    if prompt_tokens + settings.max_tokens > n_ctx:
        raise StoryflowError(
            f"the prompt ({prompt_tokens} tokens) plus max_tokens ({settings.max_tokens}) "
            f"exceeds the context window of {n_ctx} tokens: shorten the prompt, lower "
            "max_tokens or raise n_ctx"
        )
