"""Language-model backends: llama.cpp (in process, pass by pass or batched), transformers, and
a served model (an OpenAI-compatible server over HTTP, or a llama.cpp server started for the
job), each registered by name (:mod:`storyflow.lm.backends.registry`).

Backends know nothing of stories or measures; the NLL engine (``storyflow.lm.nll``) and the
sampling and answer layers import them, never the other way round.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from storyflow.errors import StoryflowError


def model_file(model_path: str | Path) -> Path:
    """``model_path`` as a Path; a clear error when the GGUF file is not there."""
    path = Path(model_path)
    if not path.is_file():
        raise StoryflowError(f"model file {path} does not exist (run the materialize_model rule)")
    return path


class Scorer(Protocol):
    """A causal LM that scores a continuation after a (cached) prefix."""

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text``, without any special token added."""
        ...

    @property
    def start_token(self) -> int:
        """The token every sequence starts with (BOS, or end-of-text when the model has no BOS)."""
        ...

    def logprobs(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        """ln p(continuation[t] | prefix + continuation[:t]) for each t (natural log, float64)."""
        ...

    @property
    def tokens_evaluated(self) -> int:
        """Tokens run through the model so far (all calls)."""
        ...


class BatchScorer(ABC):
    """A :class:`Scorer` that tokenizes with its ``vocab`` (the NLL planner's vocabulary:
    ``tokenize``, ``start_token``) and scores every pass through :meth:`logprobs_batch`."""

    vocab: Any

    def tokenize(self, text: str) -> list[int]:
        return self.vocab.tokenize(text)

    @property
    def start_token(self) -> int:
        return self.vocab.start_token

    def logprobs(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        """ln p(continuation[t] | prefix + continuation[:t]) for each t (natural log, float64):
        a batch of one request."""
        return self.logprobs_batch([(prefix, continuation)])[0]

    @abstractmethod
    def logprobs_batch(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[np.ndarray]:
        """Log-probs of each (prefix, continuation) request, in the order of ``requests``."""


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def padded_batches(lengths: Sequence[int], n_seq: int, n_batch: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped into padded batches, longest first: each batch at most
    ``n_seq`` rows and ``n_batch`` padded tokens (rows x its longest length); a sequence longer
    than ``n_batch`` goes alone.

    The order is a stable sort (equal lengths keep their order in ``lengths``), so the same
    lengths always give the same batches. Rows are not held to a minimum share of the longest:
    the passes of one story run from the whole story down to its last sentence, and cutting
    their batch where rows would be short (at most a quarter padding) made the forward passes
    smaller and slower on every measured shape but the largest (docs/engine.md, "GPU:
    transformers, batched"); sorted over a whole shard (the NLL engine's packing), neighbours
    differ little in length and padding is small anyway."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches:
            batch = batches[-1]
            width = lengths[batch[0]]  # the longest of the batch: it came first
            if len(batch) < n_seq and (len(batch) + 1) * width <= n_batch:
                batch.append(i)
                continue
        batches.append([i])
    return batches


def score_requests(
    scorer: Scorer, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
) -> list[np.ndarray]:
    """Log-probs of each (prefix, continuation) request, in order.

    A scorer with ``logprobs_batch`` (the batched llama.cpp scorer) gets all requests at once
    and may evaluate several in one batch; otherwise they are scored one after another.
    """
    batch = getattr(scorer, "logprobs_batch", None)
    if batch is not None:
        return list(batch(requests))
    return [scorer.logprobs(prefix, continuation) for prefix, continuation in requests]
