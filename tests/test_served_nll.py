"""Sequentiality NLLs from a served model: prompt log-probabilities of the completions endpoint.

The fast tests put a stand-in server behind :class:`ServedScorer` (what it is sent, what it
answers); the slow one scores a real HIPPOCORPUS story through llama-cpp-python's server on the
packaged SmolLM2 (text prompts: that server takes no token ids) and compares the table with the
in-process engine's on the same GGUF.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from storyflow.errors import StoryflowError
from storyflow.lm.backends.http import HttpBackend
from storyflow.lm.backends.served import ServedScorer


class Vocab:
    start_token = 0

    def tokenize(self, text: str) -> list[int]:
        return [len(w) for w in text.split()]

    def text(self, ids: list[int]) -> str:
        return " ".join("x" * i for i in ids)


class Server(HttpBackend):
    """Answers /completions as a server would: ``takes_ids`` says whether a list of ids is a
    prompt; ``echo`` whether prompt log-probabilities come back; ``extra`` tokens are read
    beyond the prompt's (a tokenizer that differs)."""

    def __init__(self, *, takes_ids: bool, echo: bool = True, extra: int = 0) -> None:
        super().__init__("http://stand-in/v1", "m", retries=0)
        self.takes_ids, self.echo, self.extra = takes_ids, echo, extra
        self.prompts: list[Any] = []

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["prompt"]
        self.prompts.append(prompt)
        if isinstance(prompt, list) and not self.takes_ids:
            raise StoryflowError(f"{self.base_url}{path} answered HTTP 422: prompt must be text")
        ids = prompt if isinstance(prompt, list) else [len(w) for w in prompt.split()]
        n = len(ids) + self.extra
        logprobs = [None] + [-0.5 * (k + 1) for k in range(n - 1)] + [-9.0]  # + the generated
        scored = {"token_logprobs": logprobs} if self.echo else None  # no token texts listed
        usage = {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1}
        return {"choices": [{"text": "", "logprobs": scored}], "usage": usage}


def test_token_ids_are_sent_where_the_server_takes_them() -> None:
    server = Server(takes_ids=True)
    scorer = ServedScorer(server, Vocab())
    got = scorer.logprobs_batch([([0, 3], [4, 5]), ([0], [2, 2, 2])])
    assert server.prompts == [[0, 3, 4, 5], [0, 2, 2, 2]] and scorer.send_ids
    # the last len(continuation) prompt positions, the generated token left out
    assert np.allclose(got[0], [-1.0, -1.5]) and np.allclose(got[1], [-0.5, -1.0, -1.5])
    assert scorer.tokens_evaluated == 5 + 5  # each usage: the prompt and the generated token


def test_a_server_that_takes_text_only_gets_the_ids_text() -> None:
    server = Server(takes_ids=False)
    scorer = ServedScorer(server, Vocab())
    got = scorer.logprobs(np.array([3, 1]).tolist(), [2])
    assert server.prompts == [[3, 1, 2], "xxx x xx"] and scorer.send_ids is False
    assert np.allclose(got, [-1.0])


def test_no_prompt_log_probabilities_stop_the_run_naming_the_server() -> None:
    scorer = ServedScorer(Server(takes_ids=True, echo=False), Vocab())
    with pytest.raises(StoryflowError, match=r"http://stand-in/v1 \(model m\) returned no prompt"):
        scorer.logprobs([0], [1, 2])


def test_a_server_that_tokenizes_otherwise_is_caught() -> None:
    scorer = ServedScorer(Server(takes_ids=False, extra=1), Vocab())
    with pytest.raises(
        StoryflowError, match="read the prompt as 4 tokens where storyflow planned 3"
    ):
        scorer.logprobs([3], [1, 2])


@pytest.mark.slow
def test_served_nll_equals_the_in_process_table(
    packaged_models: dict[str, Path], hippocorpus: pd.DataFrame, nlp, tmp_path: Path
) -> None:
    from conftest import defaults, model_entry, nll_model
    from test_http_backend import llama_cpp_server

    from storyflow.errors import StoryflowError
    from storyflow.lm.connect import open_model
    from storyflow.lm.nll.engine import NllSettings, run_corpus
    from storyflow.lm.registry import ModelSpec
    from storyflow.measures.plot_holes.surprisal import sentence_nlls
    from storyflow.sentences import split_sentences

    gguf = packaged_models["smollm2"]
    picked = hippocorpus.assign(n=hippocorpus["story"].str.len()).nsmallest(1, "n")
    stories = pd.DataFrame({"story_id": picked["AssignmentId"], "topic": picked["summary"]})
    sentences = split_sentences(
        pd.DataFrame({"story_id": picked["AssignmentId"], "text": picked["story"]}), nlp
    ).query("sentence_idx < 6")  # six sentences: each pass is a request of its own
    settings = NllSettings.from_config(defaults("nll", max_history=2), threads=2)
    local_model = nll_model("smollm2", gguf, settings, prompt="chat")
    local = run_corpus(local_model, stories, sentences, settings).nll
    log = tmp_path / "server.log"
    with llama_cpp_server(gguf, log, alias="smollm2", n_ctx=2048, threads=2) as url:
        server = {"base_url": url, "model": "smollm2", "tokenizer": str(gguf), "concurrency": 1}
        spec = ModelSpec.from_config(
            model_entry(name="smollm2", variant="instruct", source={"server": server})
        )
        served_model = open_model(spec)
        served = run_corpus(served_model, stories, sentences, settings).nll
        # the surprisal baseline (plain text after the start token) goes through the same
        # scorer; llama-cpp-python's server takes text only, and for a prompt that begins with
        # <|endoftext|> its echoed log-probabilities are wrong (in process: 5-15 nats/token
        # off), so the scorer refuses it, naming the fix
        texts = list(sentences["text"])
        with pytest.raises(StoryflowError, match=r"begins with <\|endoftext\|>.*\(vLLM\)"):
            sentence_nlls(served_model.scorer(), texts, 512)
    keys = ["story_id", "sentence_idx", "formulation", "history"]
    joined = local.merge(served, on=keys, suffixes=("", "_served"))
    assert len(joined) == len(local) == len(served) == 6 * 4 * 2
    assert (joined["n_tokens"] == joined["n_tokens_served"]).all()
    gap = (joined["nll"] - joined["nll_served"]).abs()
    # the same GGUF, llama.cpp on the CPU both ways; the server evaluates each pass as one
    # prompt where the engine reuses the prefix's cache, and the log-softmax is the server's
    # own (float32): measured max 4.6e-07 nats/token over three such stories
    print(f"served vs in-process: max |diff| {gap.max():.2e}, mean {gap.mean():.2e} nats/token")
    assert gap.max() <= 1e-3, gap.max()
