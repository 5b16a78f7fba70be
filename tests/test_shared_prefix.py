"""The llama.cpp scorer's shared-prefix mode against the plain path (packaged models; slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from storyflow.lm.answers import answer
from storyflow.lm.backends.llama_cpp import LlamaCppScorer, common_prefix_length
from storyflow.lm.prompts import prompt_tokens

STORY = (
    "Story:\n1. Mia found a small key under the mat.\n2. She opened the old shed with it.\n"
    "3. Inside was her grandfather's bicycle.\n\nQuestion: "
)
QUESTIONS = ["Did Mia find a key?", "Was the shed new?", "Could line 3 occur before line 2?"]
OPTIONS = {"yes": [" Yes", " yes"], "no": [" No", " no"]}
#: Largest |Δ ln P| between the shared and the plain path, per model (docs/lm.md, "Shared
#: prefixes"): SmolLM2's CPU kernels give identical logits whatever the batch; Gemma's
#: switch kernels with the number of tokens per batch.
TOLERANCE = {"smollm2": 1e-6, "gemma": 0.05}


def test_common_prefix_length() -> None:
    assert common_prefix_length([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix_length([], [1]) == 0
    assert common_prefix_length([1, 2], [1, 2]) == 2


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2", "gemma"])
def test_shared_prefix_matches_the_plain_path(packaged_models: dict[str, Path], model: str) -> None:
    path = packaged_models[model]
    shared = LlamaCppScorer(path, n_ctx=256, n_threads=2, share_prefix=True)
    plain = LlamaCppScorer(path, n_ctx=256, n_threads=2)
    prompts = [prompt_tokens(plain.llm, f"{STORY}{q}\nAnswer:") for q in QUESTIONS]
    got = [answer(shared, p, OPTIONS) for p in prompts]
    want = [answer(plain, p, OPTIONS) for p in prompts]
    diff = max(
        abs(a - b)
        for g, w in zip(got, want, strict=True)
        for ga, wa in zip(g.variant_logprobs, w.variant_logprobs, strict=True)
        for a, b in zip(ga, wa, strict=True)
    )
    assert diff <= TOLERANCE[model]
    # the story is evaluated once: the shared path runs far fewer tokens
    assert shared.tokens_evaluated < 0.5 * plain.tokens_evaluated
    # a multi-token continuation after a kept prefix equals the plain path too
    tail = plain.tokenize(" Yes, she did.")
    np.testing.assert_allclose(
        shared.logprobs(prompts[0], tail),
        plain.logprobs(prompts[0], tail),
        atol=TOLERANCE[model],
    )
