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
from storyflow.lm.prompts import added_bos

log = logging.getLogger(__name__)

#: What a server needs to score prompts, for the messages.
NEEDS = (
    "a server that returns prompt log-probabilities on /completions (echo with logprobs: vLLM, "
    "llama-cpp-python's server), or give the model local weights (source.path, hub or hf)"
)


#: Why a server that leaves the first prompt token's log-probability null cannot score the
#: terms read from the start of a text, and what to use instead.
FIRST_TOKEN = (
    "{where} returns no log-probability for the first token after the start token "
    "(llama-cpp-python's server leaves it null, as OpenAI's API does for a prompt's first "
    "token), and every term scored from the start of a text needs it: the context "
    "formulation's terms without history (h = 0, and the first sentence's full history), the "
    "plot-hole surprisal baseline and the tension PMI. Use a server that returns it (vLLM, "
    "prompts as token ids), or give the model local weights for this role (source.path, hub "
    "or hf); for sequentiality alone, nll.formulations: [topic] reads every term after the "
    "topic, and a chat prompt (prompt: chat) after the template's header"
)


class ServedScorer(BatchScorer):
    """The NLL engine's scorer on a served model (module docstring).

    ``backend``: the model's HTTP client; ``vocab``: its tokenizer as the planner reads it
    (``tokenize``, ``start_token``, ``llm``: its tokenizer, and ``text(ids)``: the ids' text
    with special tokens written out, for servers that take text only). ``bos``: the BOS the
    tokenizer puts before a text (:func:`storyflow.lm.prompts.added_bos`; None: none), which a
    server adds to a text prompt itself.
    """

    def __init__(self, backend: HttpBackend, vocab: Any) -> None:
        self.backend = backend
        self.vocab = vocab
        self.send_ids: bool | None = None  # found on the first request
        self.bos = added_bos(vocab.llm)
        #: a text prompt leaves out the BOS the served model's tokenizer adds: the server adds
        #: its own (found true or false on the first request, with the server's token count)
        self.server_adds_bos = self.bos is not None
        self._probe = threading.Lock()

    @property
    def where(self) -> str:
        return f"{self.backend.base_url} (model {self.backend.model})"

    @property
    def tokens_evaluated(self) -> int:
        """Tokens the server reports having processed (each answer's ``usage``)."""
        return self.backend.tokens_evaluated

    def logprobs_batch(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[np.ndarray]:
        """:meth:`logprobs` of each request, ``concurrency`` requests in flight; before the
        first, one cheap request (no echo) finds whether the server takes token ids and checks
        that it reads the first prompt as the planned number of tokens."""
        if not requests:
            return []
        self._find_prompt_form([*requests[0][0], *requests[0][1]])
        return self.backend._map(self._score, list(requests))

    def preflight(self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]) -> None:
        """Check, before any scoring (rule plan_nll), that the server reads each of
        ``requests`` (a prefix and the first sentence of the first story, per formulation) as
        the planned tokens, and, for a request whose prefix is the start token alone (a term
        scored from the start of a text), that it returns the log-probability of the first
        token after it. Costs one short request each, and one echo of two tokens.

        Raises:
            StoryflowError: naming the server, what it cannot do and what to use instead.
        """
        for prefix, continuation in requests:
            ids = [*prefix, *continuation]
            if not self._find_prompt_form(ids):  # not counted there: count it here
                self._check_count(ids)
            if len(prefix) == 1 and continuation:
                first = [*prefix, continuation[0]]
                self._read(self._ask(first), first, 1)

    def _score(self, request: tuple[Sequence[int], Sequence[int]]) -> np.ndarray:
        prefix, continuation = request
        ids = [*prefix, *continuation]
        return self._read(self._ask(ids), ids, len(continuation))

    def _find_prompt_form(self, ids: list[int]) -> bool:
        """Once: token ids if the server takes them, else text (the BOS the server adds left
        out), the server's token count of ``ids`` checked against the plan. Returns whether
        it did (False: found before)."""
        with self._probe:
            if self.send_ids is not None:
                return False
            self.send_ids = True
            counted, refused = self.backend.refusal(lambda: self._counted(ids))
            if refused is not None or counted not in (None, len(ids)):
                self.send_ids = False  # ids refused, or not read as ids: text
                self._check_count(ids)
            log.info(
                "%s: prompts are sent as %s",
                self.where,
                "token ids"
                if self.send_ids
                else "text (the server takes no token ids)"
                + (", without the start token the server adds" if self.server_adds_bos else ""),
            )
            return True

    def _counted(self, ids: list[int]) -> int | None:
        """The server's count of the prompt's tokens (``usage.prompt_tokens``), from a request
        that generates one token and echoes nothing; None when it reports no usage."""
        body = {"prompt": self._prompt(ids), "max_tokens": 1, "temperature": 0.0}
        answer = self.backend.post("/completions", body)
        self.backend._count(answer.get("usage") or {})
        read = (answer.get("usage") or {}).get("prompt_tokens")
        return int(read) if isinstance(read, int) else None

    def _check_count(self, ids: list[int]) -> None:
        """Stop unless the server reads ``ids`` as ``len(ids)`` tokens (a server that reports
        no count passes: every scored answer is checked again, :meth:`_read`). A text prompt
        sent without the start token to a server that adds none is sent again with it."""
        read = self._counted(ids)
        if read is None:
            return
        dropped = not self.send_ids and self.server_adds_bos and ids[:1] == [self.bos]
        if read == len(ids) - 1 and dropped:  # this server adds no start token: send ours
            self.server_adds_bos = False
            read = self._counted(ids)
        if read != len(ids):
            raise StoryflowError(self._miscounted(read, ids))

    def _miscounted(self, read: int | None, ids: list[int]) -> str:
        """The message for a prompt the server reads as ``read`` tokens, not ``len(ids)``."""
        said = f"{self.where} read the prompt as {read} tokens where storyflow planned {len(ids)}"
        if not self.send_ids and read == len(ids) + 1 and not self.server_adds_bos:
            cause = (
                "it adds a start token of its own to a text prompt that already begins with "
                f"{self.vocab.text(ids[:1])!r}, so every token would be scored one position "
                "late. Check that source.server.tokenizer is the served model's own tokenizer "
                "(its add_bos_token setting decides whether storyflow writes the start token)"
            )
        else:
            cause = (
                "it tokenizes the text otherwise, so it would score other tokens (before any "
                "scoring: nothing was spent). Check that source.server.tokenizer is the "
                "served model's own tokenizer, or serve the model where prompts can be sent as "
                "token ids (vLLM)"
            )
        return f"{said}: {cause}"

    def _prompt(self, ids: list[int]) -> Any:
        """What the server is sent for ``ids``: the ids, or their text (special tokens written
        out; the start token the server adds left out)."""
        if self.send_ids:
            return ids
        if self.vocab.text(ids[:1]) == END_OF_TEXT:
            raise StoryflowError(
                f"{self.where} takes prompts as text only, and this prompt begins with "
                f"{END_OF_TEXT} (the start token of a model without a BOS token): "
                "llama-cpp-python's server returns wrong prompt log-probabilities for such a "
                "prompt (measured 5-15 nats/token off, docs/lm.md 'Served models'). Serve the "
                "model where prompts can be token ids (vLLM), or give it local weights for "
                "this role"
            )
        if self.server_adds_bos and ids[:1] == [self.bos]:
            ids = ids[1:]  # the server puts its own start token first
        return self.vocab.text(ids)

    def _ask(self, ids: list[int]) -> dict[str, Any]:
        body = {"prompt": self._prompt(ids), "max_tokens": 1, "temperature": 0.0, "echo": True}
        return self.backend.post("/completions", {**body, "logprobs": 1})

    def _read(self, answer: dict[str, Any], ids: list[int], n: int) -> np.ndarray:
        """The log-probabilities of the last ``n`` of the prompt ``ids`` in ``answer``.

        The server's count of prompt tokens (``usage.prompt_tokens``) must be ``len(ids)``: the
        same tokens. Its echo may list fewer entries than tokens (llama-cpp-python's leaves out
        the start token), so the continuation's are read from the end, and their texts, where
        listed, must spell the continuation's text.
        """
        if not _echoed(answer):
            raise StoryflowError(
                f"{self.where} returned no prompt log-probabilities (asked with echo and "
                f"logprobs): NLLs need {NEEDS}"
            )
        choice, usage = answer["choices"][0], answer.get("usage") or {}
        self.backend._count(usage)
        scored = choice["logprobs"]
        entries = scored["token_logprobs"]
        generated = int(usage.get("completion_tokens", 1))
        read = usage.get("prompt_tokens", len(entries) - generated)
        if read != len(ids) or len(entries) - generated < n:
            raise StoryflowError(self._miscounted(read, ids))
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
                    f"{self.where} listed the scored tokens as {spelled[end]!r:.80}, not the "
                    f"planned {planned!r:.80}: its log-probabilities cannot be matched to the "
                    "planned tokens"
                )
            end = matching[0]
        logprobs = entries[:end]
        values = logprobs[len(logprobs) - n :]
        if values and values[0] is None and len(ids) - n == 1:
            raise StoryflowError(FIRST_TOKEN.format(where=self.where))
        if any(v is None for v in values):
            raise StoryflowError(f"{self.where} returned no log-probability for a scored token")
        return np.asarray(values, dtype=np.float64)


def _echoed(answer: dict[str, Any]) -> bool:
    """Whether ``answer`` holds the prompt's token log-probabilities."""
    try:
        scored = answer["choices"][0]["logprobs"]
        return isinstance(scored["token_logprobs"], list) and len(scored["token_logprobs"]) > 1
    except (KeyError, IndexError, TypeError):
        return False
