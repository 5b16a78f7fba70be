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

``extra_body``: fields added to every request, for server-specific settings (the llama.cpp
server's default sampler also applies top-k 40, min-p 0.05 and a repeat penalty of 1.1:
:data:`LLAMA_CPP_PLAIN_SAMPLING` turns them off). See docs/lm.md for what each server supports.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from storyflow.errors import StoryflowError
from storyflow.lm.answers import ClosedAnswer, Options, option_variants
from storyflow.lm.sampling import Sample, SamplingSettings, check_k

LLAMA_CPP_PLAIN_SAMPLING = {"top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0}
"""llama-cpp-python server fields that leave only temperature and top-p in its sampler."""


def sample_seed(seed: int, index: int) -> int:
    """The seed sent for sample ``index``: a 32-bit integer that depends only on (seed, index)."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


class HttpBackend:
    """Client of one model on an OpenAI-compatible server.

    ``base_url``: the API root (``http://host:port/v1``); ``model``: the model name the server
    knows; ``api_key_env``: name of the environment variable holding the API key (sent as a
    bearer token; None: no key); ``timeout``: seconds to wait for each response; ``concurrency``:
    requests in flight at once (servers batch concurrent requests); ``extra_body``: fields added
    to every request.
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
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.concurrency = concurrency
        self.extra_body = dict(extra_body or {})
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
        """POST ``body`` as JSON to ``base_url + path``; the decoded JSON answer."""
        url = f"{self.base_url}{path}"
        data = json.dumps({"model": self.model, **body, **self.extra_body}).encode()
        request = urllib.request.Request(url, data=data, headers=self._headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read().decode("utf-8")
        except urllib.error.HTTPError as err:
            detail = err.read().decode("utf-8", errors="replace")[:500]
            raise StoryflowError(f"{url} answered HTTP {err.code}: {detail}") from err
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise StoryflowError(f"cannot reach the model server at {url}: {reason}") from err
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise StoryflowError(f"{url} did not answer JSON: {text[:200]!r}") from err

    def _completion(self, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(first choice, usage) of a ``/completions`` request."""
        answer = self.post("/completions", body)
        try:
            return answer["choices"][0], answer.get("usage") or {}
        except (KeyError, IndexError, TypeError) as err:
            raise StoryflowError(
                f"{self.base_url}/completions: no choices in {answer!r:.300}"
            ) from err

    def _map(self, function: Any, items: Sequence[Any]) -> list[Any]:
        if self.concurrency <= 1 or len(items) <= 1:
            return [function(item) for item in items]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(function, items))

    # --- sampling ---------------------------------------------------------------------------------

    def sample(self, prompt: str, k: int, settings: SamplingSettings) -> list[Sample]:
        """Samples 0..k-1 of ``prompt`` (rendered text), one request each (module docstring)."""
        check_k(k)

        def one(index: int) -> Sample:
            body: dict[str, Any] = {
                "prompt": prompt,
                "n": 1,
                "max_tokens": settings.max_tokens,
                "temperature": settings.temperature,
                "top_p": settings.top_p,
                "seed": sample_seed(settings.seed, index),
            }
            if settings.stop:
                body["stop"] = list(settings.stop)
            choice, _ = self._completion(body)
            reason = choice.get("finish_reason")
            if reason == "stop":
                reason = "stop" if settings.stop else "eos"
            elif reason != "length":
                raise StoryflowError(f"{self.base_url}: unknown finish_reason {reason!r}")
            return Sample(index, str(choice.get("text", "")), (), reason)

        return self._map(one, list(range(k)))

    # --- closed-choice answers ----------------------------------------------------------------

    def variant_logprob(self, prompt: str, variant: str) -> float:
        """ln P(variant | prompt) in nats: the sum over the variant's tokens (module docstring)."""
        body = {
            "prompt": prompt + variant,
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 1,
        }
        choice, usage = self._completion(body)
        scored = choice.get("logprobs") or {}
        tokens, logprobs = scored.get("tokens"), scored.get("token_logprobs")
        if not tokens or logprobs is None or "completion_tokens" not in usage:
            raise StoryflowError(
                f"{self.base_url} returned no prompt log-probabilities (echo with logprobs): "
                "the server does not support scoring a prompt (docs/lm.md, HTTP backend)"
            )
        end = len(tokens) - int(usage["completion_tokens"])
        return trailing_logprob(tokens[:end], logprobs[:end], variant, self.base_url)

    def answer(self, prompt: str, options: Options) -> ClosedAnswer:
        """The answer distribution over ``options`` after ``prompt`` (rendered text)."""
        return self.answers([prompt], options)[0]

    def answers(self, prompts: Sequence[str], options: Options) -> list[ClosedAnswer]:
        """One :class:`ClosedAnswer` per prompt (one request per prompt and variant)."""
        names, variants = option_variants(options)
        pairs = [(p, v) for p in prompts for group in variants for v in group]
        totals = iter(self._map(lambda pair: self.variant_logprob(*pair), pairs))
        return [
            ClosedAnswer.from_variant_logprobs(
                names, variants, [[next(totals) for _ in group] for group in variants]
            )
            for _ in prompts
        ]


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
