"""Pass planning of the NLL engine: per-sentence NLLs under a causal LM, for every history size.

Terms (docs/method.md §1): for sentence s_i of a story, history size h and formulation f,

- f = ``"topic"``: the sequence is start token + topic + "\\n\\n" + s_{i-h} .. s_{i-1} + s_i;
- f = ``"context"``: the sequence is start token + s_{i-h} .. s_{i-1} + s_i;

(instruct models with ``prompt: chat``: the model's chat template replaces start token + topic +
"\\n\\n", see ``storyflow.lm.prompts``) and the score is the mean over s_i's own tokens of
−log p(token | everything before it), in nats/token. h = 0 gives NLL_T (topic) and NLL_∅
(context); h = ``"full"`` uses all preceding sentences. The start token is the model's BOS
token, or its end-of-text token when it has none.

How the terms are computed (each exactly, not approximated):

* Every sentence is tokenized once, with its leading space, and token ids are concatenated, so a
  target's tokens are identical in every condition.
* A term depends only on where its context starts: (c, i) = sentences c..i-1 then target i. All
  terms that share a context start c are read from **one** forward pass over prefix + s_c .. s_last:
  in that pass the tokens of s_{c+k} are conditioned on exactly k preceding sentences. The pass for
  c = 0 runs over the whole story and gives the full-history terms as well as every term whose
  history reaches the start of the story.
* The prefix (start token, topic) is evaluated once per story and formulation and its cached state
  is reused by every pass of that story.

Context-window policy: the window is sized to the longest sequence needed, at most
``max_context_tokens`` (and the model's training context). A story whose prefix + sentences fit the
window is planned as above, whatever the policy. When a pass does not fit, the targets that fit are
read from it and each remaining target is scored with its history truncated from the left (whole
sentences dropped, oldest first); the row records ``n_history`` (sentences actually seen) and
``truncated = True``. How far the history of a full-history target is truncated is the
``beyond_window`` policy:

* ``"longest"``: every term that does not fit keeps the longest history that fits. Each
  full-history target beyond the window then needs a pass of its own, about a window long: the cost
  grows with (sentences beyond the window) × (window), e.g. 9.4 million tokens for a
  50,000-word story with a 2,048-token window.
* ``"shared"`` (the engine's default, ``NllSettings.beyond_window``): the full-history targets
  beyond the first window are read from a chain of shared windows. Each window is a pass that
  starts some whole sentences before its first new target and runs until the window is full;
  the next window starts so that its first new target keeps the whole sentences of at most half
  the window's room before it (at least one sentence, when one fits). Every such target
  sees at least min(the longest history that fits, the sentences of half the room before it),
  and the windows cost about twice the story's tokens: linear in the story's length.
  A history term h <= H that does not fit (H sentences longer than the window) keeps the
  longest history that fits under both policies.

Planning uses cumulative token counts (binary searches, no sums over sentences per term), so a
3,000-sentence story is planned in well under a second.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from storyflow.errors import StoryflowError
from storyflow.lm.prompts import ChatPrompt

TOPIC_SEPARATOR = "\n\n"
#: Policies for the full-history targets of a story longer than the window (module docstring).
BEYOND_WINDOW = ("shared", "longest")
BeyondWindow = Literal["shared", "longest"]


@dataclass
class StoryTokens:
    """One story, tokenized: its sentences (each with its leading space) and topic prefix."""

    story_id: str
    sentences: list[list[int]]
    topic: list[int] | None  # tokens of topic + "\n\n", None when the story has no topic
    # chat-template prefixes per formulation (storyflow.lm.prompts), replacing start token + topic
    chat: dict[str, list[int]] | None = None

    def formulations(self, requested: Sequence[str]) -> list[str]:
        """The requested formulations this story has (no topic: context only)."""
        return [f for f in requested if f != "topic" or self.topic is not None]

    def prefix(self, formulation: str, start: int) -> list[int]:
        if self.chat is not None:
            return list(self.chat[formulation])
        if formulation == "topic":
            assert self.topic is not None
            return [start, *self.topic]
        return [start]


def tokenize_story(
    tokenizer: Any,
    story_id: str,
    sentences: Sequence[str],
    topic: str | None,
    chat: ChatPrompt | None = None,
) -> StoryTokens:
    """Tokenize each sentence once as ``" " + sentence``; the topic as ``topic + "\\n\\n"``.

    With ``chat``, the prefixes come from the model's chat template instead (storyflow.lm.prompts);
    the sentences are tokenized the same way.
    """
    sentence_ids = [tokenizer.tokenize(" " + text) for text in sentences]
    for idx, ids in enumerate(sentence_ids):
        if not ids:
            raise StoryflowError(
                f"story {story_id}, sentence {idx}: no tokens ({sentences[idx]!r})"
            )
    topic_ids = tokenizer.tokenize(topic.strip() + TOPIC_SEPARATOR) if topic else None
    prefixes = None
    if chat is not None:
        prefixes = {"context": chat.prefix("context", None)}
        if topic:
            prefixes["topic"] = chat.prefix("topic", topic)
    return StoryTokens(story_id, sentence_ids, topic_ids, prefixes)


@dataclass
class TermResult:
    """One scored (context start, target) term."""

    nll: float  # mean −ln p over the target's tokens, nats/token
    n_tokens: int  # tokens in the target sentence
    context_start: int  # first sentence actually in the context (> requested when truncated)
    nll_first: float  # −ln p of the target's first token alone, nats


@dataclass
class PassCounter:
    """Forward passes, and the tokens they must cover at the least.

    ``tokens`` counts each prefix once per story and formulation plus each pass's continuation:
    every target sentence once per distinct context it is scored in (the lower bound of work).
    """

    passes: int = 0
    tokens: int = 0


def _requested_starts(n: int, max_history: int) -> dict[int, set[int]]:
    """Context start c → targets i needed, for h = 0..H and full history."""
    needed: dict[int, set[int]] = defaultdict(set)
    for i in range(n):
        needed[0].add(i)  # full history
        for h in range(min(i, max_history) + 1):
            needed[i - h].add(i)
    return needed


@dataclass(frozen=True)
class Pass:
    """One forward pass of a story: prefix + sentences ``start`` .. ``stop - 1``.

    ``targets`` maps each target sentence read from this pass to the requested context starts it
    answers (more than one when truncation made several requests see the same context).
    """

    start: int
    stop: int
    targets: dict[int, list[int]]


def plan_passes(
    prefix_len: int,
    lengths: Sequence[int],
    max_history: int,
    capacity: int,
    beyond_window: BeyondWindow = "longest",
) -> list[Pass]:
    """The passes that score every (requested context start, target) term of one story.

    One pass per context start c over prefix + s_c..s_last (see the module docstring), cut where
    ``capacity`` tokens are reached; a target beyond the cut gets its history truncated from the
    left (whole sentences, oldest first) and is read from the pass of its new start. How far a
    full-history target is truncated is ``beyond_window`` (module docstring; a story that fits
    ``capacity`` gets the same plan under both). The plan depends only on the token counts, so it
    is made before any pass is evaluated.
    """
    if beyond_window not in BEYOND_WINDOW:
        raise ValueError(f"beyond_window must be one of {BEYOND_WINDOW}, not {beyond_window!r}")
    for i, length in enumerate(lengths):
        if prefix_len + length > capacity:
            raise StoryflowError(
                f"sentence {i} has {length} tokens: with the {prefix_len}-token prefix it "
                f"does not fit the {capacity}-token context; raise nll.max_context_tokens"
            )
    room = capacity - prefix_len  # tokens of sentences a pass can hold after the prefix
    ends = np.cumsum([0, *lengths])  # ends[k]: tokens of s_0 .. s_{k-1}

    def fit_stop(first: int) -> int:
        """The largest stop such that s_first .. s_{stop-1} fit the room."""
        return int(np.searchsorted(ends, ends[first] + room, side="right")) - 1

    def fit_start(target: int) -> int:
        """The smallest start such that s_start .. s_target fit the room."""
        return int(np.searchsorted(ends, ends[target + 1] - room, side="left"))

    # pending[c_used][i] = list of requested starts served by this (c_used, i) term
    pending: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for c, targets in _requested_starts(len(lengths), max_history).items():
        for i in targets:
            pending[c][i].append(c)
    if beyond_window == "shared" and ends[-1] > room:
        _share_windows(pending, ends, room, fit_stop(0), fit_start, fit_stop)
    passes = []
    while pending:
        c = min(pending)
        by_target = pending.pop(c)
        stop = min(max(by_target) + 1, fit_stop(c))  # sentences c..stop-1 fit
        fitting = {}
        for i, requested in sorted(by_target.items()):
            if i < stop:
                fitting[i] = requested
                continue
            # drop whole sentences from the left until the term fits
            pending[max(c + 1, fit_start(i))][i].extend(requested)
        passes.append(Pass(c, stop, fitting))
    return passes


def _share_windows(
    pending: dict[int, dict[int, list[int]]],
    ends: np.ndarray,
    room: int,
    first: int,
    fit_start: Callable[[int], int],
    fit_stop: Callable[[int], int],
) -> None:
    """Move the full-history targets from ``first`` on to a chain of shared windows.

    The terms requested from context start 0 that the first pass cannot hold (targets ``first``
    and later) are read instead from windows: each starts at most half the ``room`` (in whole
    sentences, at least one when it fits) before its first new target and holds every target up
    to where it is full; the next window begins with the first target it could not hold. A
    window's pass is also the pass of its start's own history terms (the same context).
    """
    n = len(ends) - 1
    half = room // 2
    moved = {i: pending[0].pop(i) for i in range(first, n)}
    while first < n:
        within_half = int(np.searchsorted(ends, ends[first] - half, side="left"))
        start = max(fit_start(first), min(within_half, first - 1))
        stop = fit_stop(start)  # > first: s_start .. s_first fit
        for i in range(first, stop):
            pending[start][i].extend(moved[i])
        first = stop


def pass_tokens(sentences: Sequence[Sequence[int]], step: Pass) -> list[int]:
    """The continuation a pass evaluates after the prefix: the tokens of s_start .. s_stop-1."""
    return [tok for s in sentences[step.start : step.stop] for tok in s]


def read_terms(
    lengths: Sequence[int], step: Pass, logprobs: np.ndarray
) -> dict[tuple[int, int], TermResult]:
    """The terms of one pass from its log-probs (one per continuation token, natural log).

    ``lengths``: tokens per sentence of the story.
    """
    offsets = np.cumsum([0, *lengths[step.start : step.stop]])
    results = {}
    for i, requested in step.targets.items():
        k = i - step.start
        nll = -float(logprobs[offsets[k] : offsets[k + 1]].mean())
        first = -float(logprobs[offsets[k]])
        for r in requested:
            results[(r, i)] = TermResult(nll, lengths[i], step.start, first)
    return results


def context_size(stories: Sequence[StoryTokens], formulations: Sequence[str], start: int) -> int:
    """Tokens of the longest full-history sequence (prefix + whole story) over all stories."""
    longest = 1
    for story in stories:
        body = sum(len(s) for s in story.sentences)
        for formulation in story.formulations(formulations):
            longest = max(longest, len(story.prefix(formulation, start)) + body)
    return longest
