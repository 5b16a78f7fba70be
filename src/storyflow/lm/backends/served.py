"""NLL scoring on a served model: the prompt log-probabilities of the completions endpoint.

A :class:`ServedScorer` is the NLL engine's scorer (``tokenize``, ``start_token``, ``logprobs``,
``logprobs_batch``) for a model behind an OpenAI-compatible server. Each engine pass (a prefix
and a continuation of token ids, made with the served model's own tokenizer, the config's
``source.server.tokenizer``) is one ``/completions`` request with ``echo``, ``logprobs: 1`` and
one generated token: the server returns the log-probability of every prompt token, and the
continuation's are read off its end (the generated token is dropped). Passes go
``concurrency`` at a time (the server batches them).

The prompt is sent as **token ids** where the server takes them (vLLM), so it scores exactly the
tokens storyflow planned; a server that refuses ids (llama-cpp-python's takes text only) gets
the ids' text instead, special tokens written out, and the run checks on every answer that the
server read as many tokens as were planned (``usage.prompt_tokens``) and that the scored
tokens' texts spell the continuation, stopping otherwise: a different tokenization would score
other tokens. The first pass finds out which, once. A text prompt that begins with
``<|endoftext|>`` (the start token of a model without BOS: every plain-framed pass of SmolLM2 or
Qwen) is refused: llama-cpp-python's server returns wrong log-probabilities for it although
the token counts and texts check out (measured against in-process llama.cpp: 5-15 nats/token
off, where chat-framed prompts agree to 1e-7).

A server that returns no prompt log-probabilities stops the run before any table is written,
naming the server and what to do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from storyflow.errors import StoryflowError
from storyflow.lm.backends import BatchScorer
from storyflow.lm.backends.http import HttpBackend
from storyflow.lm.backends.llama_cpp import END_OF_TEXT

log = logging.getLogger(__name__)

#: What a server needs to score prompts, for the messages.
NEEDS = (
    "a server that returns prompt log-probabilities on /completions (echo with logprobs: vLLM, "
    "llama-cpp-python's server), or give the model local weights (source.path, hub or hf)"
)


class ServedScorer(BatchScorer):
    """The NLL engine's scorer on a served model (module docstring).

    ``backend``: the model's HTTP client; ``vocab``: its tokenizer as the planner reads it
    (``tokenize``, ``start_token``, and ``text(ids)``: the ids' text with special tokens
    written out, for servers that take text only).
    """

    def __init__(self, backend: HttpBackend, vocab: Any) -> None:
        self.backend = backend
        self.vocab = vocab
        self.send_ids: bool | None = None  # found on the first pass
        self._probe = threading.Lock()

    @property
    def tokens_evaluated(self) -> int:
        """Tokens the server reports having processed (each answer's ``usage``)."""
        return self.backend.tokens_evaluated

    def logprobs_batch(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[np.ndarray]:
        """:meth:`logprobs` of each request, ``concurrency`` requests in flight (the first
        alone: it finds out whether the server takes token ids)."""
        if not requests:
            return []
        first = [self._score(requests[0])]
        return first + self.backend._map(self._score, list(requests[1:]))

    def _score(self, request: tuple[Sequence[int], Sequence[int]]) -> np.ndarray:
        prefix, continuation = request
        ids = [*prefix, *continuation]
        if self.send_ids is None:
            with self._probe:
                if self.send_ids is None:
                    return self._first(ids, len(continuation))
        return self._read(self._ask(ids), ids, len(continuation))

    def _first(self, ids: list[int], n: int) -> np.ndarray:
        """The first pass: token ids if the server takes them, else text (module docstring)."""
        self.send_ids = True
        answer, refused = self.backend.refusal(lambda: self._ask(ids))
        if refused is not None or not _echoed(answer):
            self.send_ids = False
            answer = self._ask(ids)
        log.info(
            "%s (model %s): prompts are sent as %s",
            self.backend.base_url,
            self.backend.model,
            "token ids" if self.send_ids else "text (the server takes no token ids)",
        )
        return self._read(answer, ids, n)

    def _ask(self, ids: list[int]) -> dict[str, Any]:
        if not self.send_ids and self.vocab.text(ids[:1]) == END_OF_TEXT:
            raise StoryflowError(
                f"{self.backend.base_url} (model {self.backend.model}) takes prompts as text "
                f"only, and this prompt begins with {END_OF_TEXT} (the start token of a model "
                "without a BOS token): llama-cpp-python's server returns wrong prompt "
                "log-probabilities for such a prompt (measured 5-15 nats/token off, docs/lm.md "
                "'Served models'). Serve the model where prompts can be token ids (vLLM), or "
                "give it local weights for this role"
            )
        prompt: Any = ids if self.send_ids else self.vocab.text(ids)
        body = {"prompt": prompt, "max_tokens": 1, "temperature": 0.0, "echo": True}
        return self.backend.post("/completions", {**body, "logprobs": 1})

    def _read(self, answer: dict[str, Any], ids: list[int], n: int) -> np.ndarray:
        """The log-probabilities of the last ``n`` of the prompt ``ids`` in ``answer``.

        The server's count of prompt tokens (``usage.prompt_tokens``) must be ``len(ids)``: the
        same tokens. Its echo may list fewer entries than tokens (llama-cpp-python's leaves out
        special tokens, whose text is empty), so the continuation's are read from the end, and
        their texts, where listed, must spell the continuation's text.
        """
        where = f"{self.backend.base_url} (model {self.backend.model})"
        if not _echoed(answer):
            raise StoryflowError(
                f"{where} returned no prompt log-probabilities (asked with echo and logprobs): "
                f"NLLs need {NEEDS}"
            )
        choice, usage = answer["choices"][0], answer.get("usage") or {}
        self.backend._count(usage)
        scored = choice["logprobs"]
        entries = scored["token_logprobs"]
        generated = int(usage.get("completion_tokens", 1))
        read = usage.get("prompt_tokens", len(entries) - generated)
        if read != len(ids) or len(entries) - generated < n:
            raise StoryflowError(
                f"{where} read the prompt as {read} tokens where storyflow planned "
                f"{len(ids)}: it tokenizes the text differently, so it would score other tokens. "
                "Serve the model where prompts can be sent as token ids (vLLM), or check that "
                "source.server.tokenizer is the served model's own tokenizer"
            )
        end = len(entries) - generated  # the prompt's entries end where the generated begin
        tokens = scored.get("tokens")
        if isinstance(tokens, list) and len(tokens) == len(entries):
            # a generated special token (an end of text after a story's last sentence) has no
            # text, and llama-cpp-python lists none: then the prompt's entries run to the end.
            # Either way the entries read must spell the planned continuation.
            planned = self.vocab.text(ids[len(ids) - n :])
            spelled = {e: "".join(tokens[e - n : e]) for e in (end, len(entries))}
            matching = [e for e, text in spelled.items() if text == planned]
            if not matching:
                raise StoryflowError(
                    f"{where} listed the scored tokens as {spelled[end]!r:.80}, not the planned "
                    f"{planned!r:.80}: its log-probabilities cannot be matched to the planned "
                    "tokens"
                )
            end = matching[0]
        logprobs = entries[:end]
        values = logprobs[len(logprobs) - n :]
        if any(v is None for v in values):
            raise StoryflowError(f"{where} returned no log-probability for a scored token")
        return np.asarray(values, dtype=np.float64)


def _echoed(answer: dict[str, Any]) -> bool:
    """Whether ``answer`` holds the prompt's token log-probabilities."""
    try:
        scored = answer["choices"][0]["logprobs"]
        return isinstance(scored["token_logprobs"], list) and len(scored["token_logprobs"]) > 1
    except (KeyError, IndexError, TypeError):
        return False
