"""OpenAI-compatible HTTP backend: sampling and closed-choice answers from a model server.

Talks to the legacy completions endpoint, ``POST {base_url}/completions`` (``base_url`` as
OpenAI clients take it, e.g. ``http://127.0.0.1:8000/v1``), which vLLM, llama.cpp's servers and
some hosted APIs offer. Standard library only (``urllib.request``, ``json``).

* **samples** (:meth:`HttpBackend.sample`): one request per sample (``n = 1``) with the sample's
  own seed :func:`sample_seed` (seed, k), so sample k does not depend on how many are drawn.
  Servers sample with their own code and random generator: seeded samples repeat on the same
  server, but equal the in-process samplers' texts only when greedy (temperature 0). The server
  returns no token ids (``Sample.tokens`` is empty) and reports one finish reason ``stop`` for
  both a stop string and an end-of-generation token: with stop strings set it is read as
  ``stop``, without as ``eos``.
* **answers** (:meth:`HttpBackend.answer`): each option variant is scored by one request for
  prompt + variant with ``echo = true``, ``logprobs = 1`` and ``max_tokens = 1``: the server
  returns the log-probability of every prompt token; the variant's are the trailing tokens
  whose texts make up the variant (before the one generated token), summed. A server that
  tokenizes the variant together with the end of the prompt (one token across the boundary) is
  reported as an error rather than scored.

* **chat API** (``api = "chat"``): a prompt given as :class:`~storyflow.lm.prompts.Messages`
  (the server renders them with its own chat template) goes to ``POST {base_url}/chat/completions``;
  samples as above, answers from the top log-probabilities of the one generated token
  (``logprobs``, ``top_logprobs``), since that endpoint echoes no prompt log-probabilities.
* **top log-probabilities** (``answers = "top_logprobs"``, and always for messages): one token
  is generated (temperature 0) and the server's ``top_logprobs`` most probable first tokens are
  read; an option variant gets the log-probability of the listed token that is its first token
  (exact for one-token answers such as "Yes"; the first token's probability, an upper bound,
  for a longer answer), else none (``-inf``: less mass). Its first token is known from the
  served model's tokenizer when one is configured, else guessed from the texts
  (:func:`first_token_match`).

``extra_body``: fields added to every request, for server-specific settings (the llama.cpp
server's default sampler also applies top-k 40, min-p 0.05 and a repeat penalty of 1.1:
:data:`LLAMA_CPP_PLAIN_SAMPLING` turns them off). See docs/lm.md for what each server supports.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from storyflow.errors import StoryflowError
from storyflow.lm.answers import ClosedAnswer, Options, option_variants
from storyflow.lm.prompts import Messages, Prompt
from storyflow.lm.sampling import Sample, SamplingSettings

log = logging.getLogger(__name__)

LLAMA_CPP_PLAIN_SAMPLING = {"top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0}
"""llama-cpp-python server fields that leave only temperature and top-p in its sampler."""


def sample_seed(seed: int, index: int) -> int:
    """The seed sent for sample ``index``: a 32-bit integer that depends only on (seed, index)."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


class ServerUnavailable(StoryflowError):
    """A served model did not answer after every retry (the message names server and model);
    ``unreachable``: the last fault was no answer at all (no connection, a timeout)."""

    def __init__(self, message: str, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


class _TransientFault(Exception):
    """A fault worth retrying: no or a dropped connection, a timeout, HTTP 429/5xx, not JSON;
    ``unreachable`` for the first two."""

    def __init__(self, message: str, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


class HttpBackend:
    """Client of one model on an OpenAI-compatible server.

    ``base_url``: the API root (``http://host:port/v1``); ``model``: the model name the server
    knows; ``api_key_env``: name of the environment variable holding the API key (sent as a
    bearer token; None: no key); ``timeout``: seconds to wait for each response; ``concurrency``:
    requests in flight at once (servers batch concurrent requests); ``extra_body``: fields added
    to every request; ``api``: ``completions`` (prompts as text) or ``chat`` (prompts as
    messages, the server's chat template); ``answers``: how closed choices are read from text
    prompts, ``echo`` (exact prompt log-probabilities), ``top_logprobs`` (the first generated
    token's, ``top_logprobs`` of them; module docstring) or ``auto`` (echo where the server
    scores prompts, found on the first question; else top log-probabilities); ``pieces``: a
    text's token texts in the served model's tokenizer (None: unknown), which tells
    :func:`first_token_match` each answer's first token. ``retries``: how many times a request
    that met a transient fault (no connection, a dropped connection, a timeout, HTTP 429 or 5xx,
    an answer that is not JSON) is sent again, ``backoff`` seconds after the first fault and
    twice as long after each next one (at most ``max_backoff``); a request is bounded by
    (retries + 1) × timeout plus the waits. After the last retry the run stops with
    :class:`ServerUnavailable`, naming the server, the model and the requests answered.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        timeout: float = 120.0,
        *,
        concurrency: int = 1,
        extra_body: dict[str, Any] | None = None,
        api: str = "completions",
        answers: str = "auto",
        top_logprobs: int = 20,
        pieces: Callable[[str], list[str]] | None = None,
        retries: int = 4,
        backoff: float = 2.0,
        max_backoff: float = 60.0,
    ) -> None:
        self.api = api
        self.answer_method = answers
        self.top_logprobs = top_logprobs
        self.pieces = pieces
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.concurrency = concurrency
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.extra_body = dict(extra_body or {})
        self.tokens_reported = 0  # prompt + completion tokens of every answer's ``usage``
        self.unreported = 0  # answers without a ``usage`` count
        self._count_lock = threading.Lock()  # requests run ``concurrency`` threads at once
        self._headers = {"Content-Type": "application/json"}
        if api_key_env is not None:
            key = os.environ.get(api_key_env)
            if not key:
                raise StoryflowError(
                    f"the API key variable {api_key_env} is not set: export it before the run "
                    f"(the key for {self.base_url} is read from the environment, never a config)"
                )
            self._headers["Authorization"] = f"Bearer {key}"

    # --- transport ------------------------------------------------------------------------------

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` as JSON to ``base_url + path``; the decoded JSON answer. Transient faults
        are retried with exponential backoff (class docstring); a client error (HTTP 4xx other
        than 429) stops at once with the server's words."""
        url = f"{self.base_url}{path}"
        data = json.dumps({"model": self.model, **body, **self.extra_body}).encode()
        wait = self.backoff
        for attempt in range(self.retries + 1):
            try:
                return self._post_once(url, data)
            except _TransientFault as fault:
                last = fault
                if attempt == self.retries:
                    break
                log.warning(
                    "%s: %s; retry %d of %d in %.0f s", url, fault, attempt + 1, self.retries, wait
                )
                time.sleep(wait)
                wait = min(2 * wait, self.max_backoff)
        raise ServerUnavailable(
            f"the model server at {self.base_url} (model {self.model!r}) failed "
            f"{self.retries + 1} times in a row, last: {last}. Check that it runs and answers "
            f"(curl {self.base_url}/models), or raise source.server.timeout or .retries; then run "
            "the same command again",
            unreachable=last.unreachable,
        )

    def _post_once(self, url: str, data: bytes) -> dict[str, Any]:
        request = urllib.request.Request(url, data=data, headers=self._headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read().decode("utf-8", errors="replace")
        except urllib.error.HTTPError as err:
            detail = err.read().decode("utf-8", errors="replace")[:500]
            if err.code == 429 or err.code >= 500:
                raise _TransientFault(f"HTTP {err.code}: {detail}") from err
            raise StoryflowError(f"{url} answered HTTP {err.code}: {detail}") from err
        except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
            reason = getattr(err, "reason", None) or err or type(err).__name__
            raise _TransientFault(f"no answer ({reason})", unreachable=True) from err
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise _TransientFault(f"an answer that is not JSON: {text[:200]!r}") from err

    def _map(self, function: Any, items: Sequence[Any]) -> list[Any]:
        """``function`` over ``items`` (requests), ``concurrency`` at a time; when the server
        gives out, the message says how many of the batch's requests were answered."""
        results: list[Any] = []
        try:
            if self.concurrency <= 1 or len(items) <= 1:
                for item in items:
                    results.append(function(item))
            else:
                with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                    for result in pool.map(function, items):
                        results.append(result)
        except ServerUnavailable as err:
            raise ServerUnavailable(
                f"{err} ({len(results)} of this batch's {len(items)} requests were answered "
                "before; nothing of the job's output was written)",
                unreachable=err.unreachable,
            ) from None
        return results

    # --- sampling ---------------------------------------------------------------------------------

    def _request(
        self, prompt: Prompt, body: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(first choice, usage) of ``body`` sent for ``prompt``: text to ``/completions``,
        messages to ``/chat/completions``."""
        if isinstance(prompt, Messages):
            answer = self.post("/chat/completions", {"messages": prompt.as_dicts(), **body})
            path = "/chat/completions"
        else:
            answer = self.post("/completions", {"prompt": prompt, **body})
            path = "/completions"
        try:
            choice, usage = answer["choices"][0], answer.get("usage") or {}
        except (KeyError, IndexError, TypeError) as err:
            raise StoryflowError(f"{self.base_url}{path}: no choices in {answer!r:.300}") from err
        self._count(usage)
        return choice, usage

    def _count(self, usage: dict[str, Any]) -> None:
        """Add an answer's ``usage`` to :attr:`tokens_reported`: ``total_tokens``, else
        ``prompt_tokens`` + ``completion_tokens``; the first answer without them is logged."""
        total, prompt, completion = (
            usage.get(k) for k in ("total_tokens", "prompt_tokens", "completion_tokens")
        )
        if not isinstance(total, int):
            if isinstance(prompt, int) and isinstance(completion, int):
                total = prompt + completion
            else:
                total = None
        with self._count_lock:
            if total is not None:
                self.tokens_reported += total
                return
            self.unreported += 1
            first = self.unreported == 1
        if first:
            log.warning(
                "%s (model %s) reports no token usage in its answers: tokens not reported by "
                "the server, so this model's token counts in logs and cost tables stay 0",
                self.base_url,
                self.model,
            )

    @property
    def tokens_evaluated(self) -> int:
        """Tokens the server reports having processed so far (prompt + completion per request,
        from each answer's ``usage``; a server may have cached some of the prompt tokens).
        Answers without ``usage`` add nothing (:attr:`unreported` counts them)."""
        return self.tokens_reported

    def sample(self, prompt: Prompt, k: int, settings: SamplingSettings) -> list[Sample]:
        """Samples 0..k-1 of ``prompt`` (rendered text, or messages for the chat API), one
        request each (module docstring)."""

        def one(index: int) -> Sample:
            body: dict[str, Any] = {
                "n": 1,
                "max_tokens": settings.max_tokens,
                "temperature": settings.temperature,
                "top_p": settings.top_p,
                "seed": sample_seed(settings.seed, index),
            }
            if settings.stop:
                body["stop"] = list(settings.stop)
            choice, _ = self._request(prompt, body)
            reason = choice.get("finish_reason")
            if reason == "stop":
                reason = "stop" if settings.stop else "eos"
            elif reason != "length":
                raise StoryflowError(f"{self.base_url}: unknown finish_reason {reason!r}")
            message = choice.get("message") or {}
            text = message.get("content") if isinstance(prompt, Messages) else choice.get("text")
            return Sample(index, str(text or ""), (), reason)

        return self._map(one, list(range(k)))

    # --- closed-choice answers ----------------------------------------------------------------

    def variant_logprob(self, prompt: str, variant: str) -> float:
        """ln P(variant | prompt) in nats: the sum over the variant's tokens (module docstring)."""
        body = {"max_tokens": 1, "temperature": 0.0, "echo": True, "logprobs": 1}
        choice, usage = self._request(prompt + variant, body)
        scored = choice.get("logprobs") or {}
        tokens, logprobs = scored.get("tokens"), scored.get("token_logprobs")
        if not tokens or logprobs is None or "completion_tokens" not in usage:
            raise StoryflowError(
                f"{self.base_url} returned no prompt log-probabilities (echo with logprobs): "
                "the server does not support scoring a prompt (docs/lm.md, HTTP backend)"
            )
        end = len(tokens) - int(usage["completion_tokens"])
        return trailing_logprob(tokens[:end], logprobs[:end], variant, self.base_url)

    def first_token_logprobs(self, prompt: Prompt) -> dict[str, float]:
        """The server's most probable first tokens after ``prompt`` (text or messages) and their
        log-probabilities in nats: one token generated at temperature 0."""
        body: dict[str, Any] = {"max_tokens": 1, "temperature": 0.0}
        if isinstance(prompt, Messages):
            body |= {"logprobs": True, "top_logprobs": self.top_logprobs}
        else:
            body |= {"logprobs": self.top_logprobs}
        choice, _ = self._request(prompt, body)
        scored = choice.get("logprobs") or {}
        try:
            if "content" in scored:  # chat shape (llama.cpp's llama-server uses it for both)
                listed = scored["content"][0]["top_logprobs"]
                return {str(t["token"]): float(t["logprob"]) for t in listed}
            return {str(t): float(lp) for t, lp in scored["top_logprobs"][0].items()}
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as err:
            raise StoryflowError(
                f"{self.base_url} returned no top log-probabilities of the first token "
                f"(got {scored!r:.200}): the server does not support logprobs on this endpoint "
                "(docs/lm.md, HTTP backend)"
            ) from err

    def refusal(self, ask: Callable[[], Any]) -> tuple[Any, StoryflowError | None]:
        """``(ask(), None)``, or ``(None, the error)`` where the server refuses it: a request
        that probes what the server supports is sent once, a refusal (a client error, an
        answer without what was asked, a server error) being an answer; a server that cannot
        be reached is retried as any request, and stops the run if it stays so."""
        retries, self.retries = self.retries, 0
        try:
            try:
                return ask(), None
            except ServerUnavailable as err:
                if not err.unreachable:
                    raise
                self.retries = retries  # down, not refusing: retry as any request, then stop
                return ask(), None
        except StoryflowError as err:
            if isinstance(err, ServerUnavailable) and err.unreachable:
                raise
            return None, err
        finally:
            self.retries = retries

    def _probe_echo(self, prompt: str | None, variants: Sequence[str]) -> None:
        """``answers: auto``: try one echo request; where the server refuses echo or returns no
        prompt log-probabilities, read the first token's top log-probabilities from now on."""
        if prompt is None:
            return
        _, refused = self.refusal(lambda: self.variant_logprob(prompt, variants[0]))
        if refused is None:
            self.answer_method = "echo"
            return
        log.warning(
            "%s (model %s) does not score prompts (echo): %s; closed choices are read from "
            "the top log-probabilities of one generated token instead (docs/lm.md)",
            self.base_url,
            self.model,
            str(refused)[:200],
        )
        self.answer_method = "top_logprobs"

    def answer(self, prompt: Prompt, options: Options) -> ClosedAnswer:
        """The answer distribution over ``options`` after ``prompt``."""
        return self.answers([prompt], options)[0]

    def answers(self, prompts: Sequence[Prompt], options: Options) -> list[ClosedAnswer]:
        """One :class:`ClosedAnswer` per prompt: exact, one request per prompt and variant
        (``echo``, text prompts), or from one request per prompt (``top_logprobs``, and every
        messages prompt)."""
        names, variants = option_variants(options)
        flat = [v for group in variants for v in group]
        if self.answer_method == "auto":
            self._probe_echo(next((p for p in prompts if not isinstance(p, Messages)), None), flat)
        by_echo = [self.answer_method == "echo" and not isinstance(p, Messages) for p in prompts]
        pairs = [(p, v) for p, echo in zip(prompts, by_echo, strict=True) if echo for v in flat]
        exact = iter(self._map(lambda pair: self.variant_logprob(*pair), pairs))
        listed = iter(
            self._map(
                self.first_token_logprobs,
                [p for p, echo in zip(prompts, by_echo, strict=True) if not echo],
            )
        )
        results = []
        for echo in by_echo:
            if echo:
                totals = iter([next(exact) for _ in flat])
                grouped = [[next(totals) for _ in group] for group in variants]
            else:
                grouped = first_token_match(next(listed), variants, self.base_url, self.pieces)
            results.append(ClosedAnswer.from_variant_logprobs(names, variants, grouped))
        return results


def first_token_match(
    top: dict[str, float],
    variants: Sequence[Sequence[str]],
    where: str,
    pieces: Callable[[str], list[str]] | None = None,
) -> list[list[float]]:
    """ln P of each answer variant (grouped by option) read from the first token's top
    log-probabilities ``top`` (token text → nats).

    With ``pieces`` (a variant's token texts in the served model's tokenizer: the
    ``source.server.tokenizer`` file), a variant reads the listed token equal to its first
    token: exact for a one-token variant, an upper bound for a longer one; ``-inf`` when that
    token is not listed (less than the smallest listed). Without a tokenizer the first token is
    guessed: the listed token equal to the variant, else the longest listed token it starts with
    that holds a letter or digit (a listed space or punctuation mark is not taken as the start
    of " Yes"), else none (``-inf``).

    A token is counted once per option: a second variant of the same option that reads an
    already counted token gets ``-inf`` (``"Y"`` and ``"Yes"`` of one option, with only ``"Y"``
    listed, give P("Y") once, not twice). Two *options* read from the same token cannot be told
    apart: an error naming them. When no variant of any option is listed, every variant gets the
    smallest listed log-probability, their common upper bound: the options tie, and ``mass``
    (below the listed tokens') flags the answer as one the model did not give.
    """
    owner: dict[str, tuple[int, str]] = {}
    values: list[list[float]] = []
    for index, group in enumerate(variants):
        row = []
        for variant in group:
            if pieces is not None:
                first = (pieces(variant) or [""])[0]
                token = first if first in top else ""
            elif variant in top:
                token = variant
            else:
                prefixes = [t for t in top if variant.startswith(t) and any(c.isalnum() for c in t)]
                token = max(prefixes, key=len) if prefixes else ""
            if token and token in owner:
                if owner[token][0] != index:
                    raise StoryflowError(
                        f"{where}: the answers {owner[token][1]!r} and {variant!r} begin with the "
                        f"same token {token!r}, so one generated token cannot tell them apart: "
                        "use answers that differ in their first token, or answers: echo"
                    )
                token = ""  # already counted for this option
            elif token:
                owner[token] = (index, variant)
            row.append(top[token] if token else float("-inf"))
        values.append(row)
    if not owner and top:
        floor = min(top.values())
        values = [[floor for _ in group] for group in variants]
    return values


def trailing_logprob(
    tokens: Sequence[str], logprobs: Sequence[float | None], text: str, where: str
) -> float:
    """Sum of the log-probs of the trailing tokens whose texts join into ``text`` exactly."""
    joined = ""
    total = 0.0
    for token, logprob in zip(reversed(tokens), reversed(logprobs), strict=True):
        if logprob is None:
            break
        joined = token + joined
        total += float(logprob)
        if joined == text:
            return total
        if len(joined) >= len(text) or not text.endswith(joined):
            break
    raise StoryflowError(
        f"{where}: the answer {text!r} is not a whole number of tokens after the prompt in the "
        f"server's tokenization (its last tokens read {joined!r}): end the prompt with a space "
        "or newline, or change the option"
    )
