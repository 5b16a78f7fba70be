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

#: Served Gemma 3 against the in-process engine, nats/token. Gemma's x86 kernels give logits
#: that move with the number of tokens in a batch (docs/lm.md), and the server decodes a
#: prompt in other batches than the engine does (it reuses the prefix it holds): measured
#: max 0.0133, mean 0.0033 over 9 terms (benchmarks/served_nll_determinism.py), and the
#: engine's own batch-length spread is up to 0.014; 0.02 is the tolerance the engine's
#: Gemma tests use for the same reason (tests/test_nll_engine.py).
GEMMA_TOLERANCE = 0.02


class GgufMetadata:
    """What storyflow reads of a GGUF tokenizer to know its BOS (``llm`` of a vocabulary):
    ``adds``: tokenizer.ggml.add_bos_token."""

    def __init__(self, adds: bool) -> None:
        self.metadata = {"tokenizer.ggml.add_bos_token": str(adds).lower()}

    def token_bos(self) -> int:
        return 0


class Vocab:
    """A tokenizer whose start token (id 0) is not one it puts before a text (SmolLM2's)."""

    start_token = 0
    llm = GgufMetadata(adds=False)

    def tokenize(self, text: str) -> list[int]:
        return [len(w) for w in text.split()]

    def text(self, ids: list[int]) -> str:
        return " ".join("x" * i for i in ids)


class BosVocab(Vocab):
    """A tokenizer that puts its BOS (id 0, text ``<s>``) before a text, as Gemma's and
    Llama's do."""

    llm = GgufMetadata(adds=True)

    def text(self, ids: list[int]) -> str:
        return " ".join("<s>" if i == 0 else "x" * i for i in ids)


class Server(HttpBackend):
    """Answers /completions as a server would: ``takes_ids`` says whether a list of ids is a
    prompt; ``echo`` whether prompt log-probabilities come back; ``extra`` tokens are read
    beyond the prompt's (a tokenizer that differs); ``adds_bos``: a text prompt gets a start
    token (id 0) first, as a server of a model whose tokenizer adds one does; ``like_llama_cpp``:
    the echo leaves out a leading start token and gives the first listed token no
    log-probability (llama-cpp-python's server)."""

    def __init__(
        self,
        *,
        takes_ids: bool,
        echo: bool = True,
        extra: int = 0,
        adds_bos: bool = False,
        like_llama_cpp: bool = False,
    ) -> None:
        super().__init__("http://stand-in/v1", "m", retries=0)
        self.takes_ids, self.echo, self.extra = takes_ids, echo, extra
        self.adds_bos, self.like_llama_cpp = adds_bos, like_llama_cpp
        self.prompts: list[Any] = []
        self.bodies: list[dict[str, Any]] = []

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["prompt"]
        self.prompts.append(prompt)
        self.bodies.append(body)
        if isinstance(prompt, list) and not self.takes_ids:
            raise StoryflowError(f"{self.base_url}{path} answered HTTP 422: prompt must be text")
        if isinstance(prompt, list):
            ids = list(prompt)
        else:
            ids = [0 if w == "<s>" else len(w) for w in prompt.split()]
            ids = [0, *ids] if self.adds_bos else ids
        n = len(ids) + self.extra
        logprobs: list[float | None] = [None] + [-0.5 * (k + 1) for k in range(n - 1)]
        if self.like_llama_cpp and ids[:1] == [0]:
            logprobs = [None, *logprobs[2:]]  # the start token left out, the next one null
        scored = {"token_logprobs": [*logprobs, -9.0]} if self.echo else None  # + generated
        usage = {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1}
        return {"choices": [{"text": "", "logprobs": scored}], "usage": usage}


def test_token_ids_are_sent_where_the_server_takes_them() -> None:
    server = Server(takes_ids=True)
    scorer = ServedScorer(server, Vocab())
    got = scorer.logprobs_batch([([0, 3], [4, 5]), ([0], [2, 2, 2])])
    # first a request that echoes nothing: the server takes ids and counts them as planned
    assert server.prompts == [[0, 3, 4, 5], [0, 3, 4, 5], [0, 2, 2, 2]] and scorer.send_ids
    assert "echo" not in server.bodies[0] and server.bodies[1]["echo"]
    # the last len(continuation) prompt positions, the generated token left out
    assert np.allclose(got[0], [-1.0, -1.5]) and np.allclose(got[1], [-0.5, -1.0, -1.5])
    assert scorer.tokens_evaluated == 3 * 5  # each usage: the prompt and the generated token


def test_a_server_that_takes_text_only_gets_the_ids_text() -> None:
    server = Server(takes_ids=False)
    scorer = ServedScorer(server, Vocab())
    got = scorer.logprobs(np.array([3, 1]).tolist(), [2])
    assert server.prompts == [[3, 1, 2], "xxx x xx", "xxx x xx"] and scorer.send_ids is False
    assert np.allclose(got, [-1.0])


def test_no_prompt_log_probabilities_stop_the_run_naming_the_server() -> None:
    scorer = ServedScorer(Server(takes_ids=True, echo=False), Vocab())
    with pytest.raises(StoryflowError, match=r"http://stand-in/v1 \(model m\) returned no prompt"):
        scorer.logprobs([0], [1, 2])


def test_a_server_that_tokenizes_otherwise_is_caught_before_any_echo() -> None:
    server = Server(takes_ids=False, extra=1)
    scorer = ServedScorer(server, Vocab())
    with pytest.raises(
        StoryflowError, match="read the prompt as 4 tokens where storyflow planned 3"
    ):
        scorer.logprobs([3], [1, 2])
    assert not any(body.get("echo") for body in server.bodies)  # nothing was scored


def test_the_start_token_a_server_adds_is_not_written_into_the_text() -> None:
    """Gemma and Llama put a BOS before a text; a text-only server adds its own, so storyflow
    sends the text without the one it planned. The server then reads the planned number of
    tokens, and the scored values are the planned positions'."""
    server = Server(takes_ids=False, adds_bos=True)
    scorer = ServedScorer(server, BosVocab())
    got = scorer.logprobs([0, 3], [4, 5])
    assert server.prompts[1:] == ["xxx xxxx xxxxx", "xxx xxxx xxxxx"]  # no <s> in the text
    assert np.allclose(got, [-1.0, -1.5])
    # a server that adds none is found on the first count, and then gets the start token
    plain = Server(takes_ids=False, adds_bos=False)
    scorer = ServedScorer(plain, BosVocab())
    assert np.allclose(scorer.logprobs([0, 3], [4, 5]), [-1.0, -1.5])
    assert plain.prompts[-1] == "<s> xxx xxxx xxxxx" and not scorer.server_adds_bos


def test_which_start_token_a_server_adds_comes_from_the_models_tokenizer(
    packaged_models: dict[str, Path],
) -> None:
    """Gemma's GGUF puts <bos> (id 2) before a text, so a server adds it and storyflow leaves it
    out of the text; SmolLM2's adds none (its <|endoftext|> start token is storyflow's)."""
    from storyflow.lm.backends.llama_cpp import VocabOnly

    gemma, smol = VocabOnly(packaged_models["gemma"]), VocabOnly(packaged_models["smollm2"])
    server = Server(takes_ids=False, adds_bos=True)
    assert ServedScorer(server, smol).bos is None and smol.start_token == 0
    scorer = ServedScorer(server, gemma)
    assert scorer.bos == gemma.start_token == 2 and scorer.server_adds_bos
    ids = [2, *gemma.tokenize(" Once upon a time.")]
    assert scorer._prompt(ids) == gemma.text(ids[1:]) == " Once upon a time."


def test_a_start_token_added_twice_is_named_as_such_before_any_scoring() -> None:
    """A tokenizer that says it adds no BOS (so storyflow writes the start token) served by a
    server that adds one: the counts differ by that token, said as such, not as another
    tokenizer."""
    server = Server(takes_ids=False, adds_bos=True)
    scorer = ServedScorer(server, Vocab())  # no bos_added
    with pytest.raises(StoryflowError, match="adds a start token of its own to a text prompt"):
        scorer.logprobs([3], [1, 2])
    assert not any(body.get("echo") for body in server.bodies)


def test_a_server_without_the_first_tokens_log_probability_is_refused_at_planning() -> None:
    """llama-cpp-python's echo gives the token after the start token no value: the plan's
    preflight (rule plan_nll) asks two tokens and stops with the reason and what to use."""
    server = Server(takes_ids=False, adds_bos=True, like_llama_cpp=True)
    scorer = ServedScorer(server, BosVocab())
    scorer.preflight([([0, 7, 2], [4, 5])])  # a topic prefix: fine
    with pytest.raises(StoryflowError) as err:
        scorer.preflight([([0], [4, 5])])  # the context formulation: the start token alone
    message = str(err.value)
    assert "returns no log-probability for the first token after the start token" in message
    assert "nll.formulations: [topic]" in message and "vLLM" in message
    assert server.bodies[-1]["echo"] and server.prompts[-1] == "xxxx"  # two tokens, one asked


@pytest.mark.slow
def test_served_nll_equals_the_in_process_table(
    packaged_models: dict[str, Path], hippocorpus: pd.DataFrame, nlp, tmp_path: Path
) -> None:
    from conftest import defaults, model_entry, nll_model
    from test_http_backend import llama_cpp_server

    from storyflow.errors import StoryflowError
    from storyflow.lm.connect import open_model
    from storyflow.lm.nll.engine import NllSettings, run_corpus
    from storyflow.lm.specs import ModelSpec
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


@pytest.mark.slow
def test_a_served_model_that_adds_a_start_token_scores_as_in_process(
    packaged_models: dict[str, Path], hippocorpus: pd.DataFrame, nlp, tmp_path: Path
) -> None:
    """Gemma 3 (its tokenizer puts <bos> before a text) behind llama-cpp-python's server,
    which takes text only and adds the <bos> itself: the plan of both formulations is refused
    before any scoring (the server gives the first token after <bos> no log-probability, and
    the context formulation reads it); the topic formulation scores the planned tokens, the
    text sent without the <bos>, and equals the in-process engine."""
    from conftest import defaults, model_entry, nll_model
    from test_http_backend import llama_cpp_server

    from storyflow.lm.connect import open_model
    from storyflow.lm.nll.engine import NllSettings, plan_corpus, run_corpus
    from storyflow.lm.specs import ModelSpec
    from storyflow.sentences import split_sentences

    gguf = packaged_models["gemma"]
    picked = hippocorpus.assign(n=hippocorpus["story"].str.len()).nsmallest(1, "n")
    stories = pd.DataFrame({"story_id": picked["AssignmentId"], "topic": picked["summary"]})
    sentences = split_sentences(
        pd.DataFrame({"story_id": picked["AssignmentId"], "text": picked["story"]}), nlp
    ).query("sentence_idx < 2")  # Gemma's 262,144-token vocabulary: about 1 s per echoed token
    both = NllSettings.from_config(defaults("nll", max_history=1), threads=2)
    topic = NllSettings.from_config(
        defaults("nll", max_history=1, formulations=["topic"]), threads=2
    )
    local = run_corpus(nll_model("gemma", gguf, topic), stories, sentences, topic).nll
    with llama_cpp_server(
        gguf, tmp_path / "server.log", alias="gemma", n_ctx=1024, threads=2
    ) as url:
        server = {"base_url": url, "model": "gemma", "tokenizer": str(gguf), "timeout": 3600}
        spec = ModelSpec.from_config(model_entry(name="gemma", source={"server": server}))
        model = open_model(spec)
        with pytest.raises(StoryflowError, match="no log-probability for the first token after"):
            plan_corpus(model, stories, sentences, both)
        served = run_corpus(model, stories, sentences, topic).nll
        scorer = model.scorer()
    assert scorer.send_ids is False and scorer.server_adds_bos  # text, the <bos> left out
    keys = ["story_id", "sentence_idx", "formulation", "history"]
    joined = local.merge(served, on=keys, suffixes=("", "_served"))
    assert len(joined) == len(local) == len(served) == 2 * 3
    assert (joined["n_tokens"] == joined["n_tokens_served"]).all()
    gap = (joined["nll"] - joined["nll_served"]).abs()
    print(f"Gemma served vs in-process: max |diff| {gap.max():.2e}, mean {gap.mean():.2e}")
    assert gap.max() <= GEMMA_TOLERANCE, gap.max()
