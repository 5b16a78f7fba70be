"""The OpenAI-compatible HTTP backend: requests and parsing against a stub server, then a real
llama.cpp server (llama-cpp-python's) against the in-process backends on the same GGUF file.

Every server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from storyflow.errors import StoryflowError
from storyflow.lm.backends.http import (
    LLAMA_CPP_PLAIN_SAMPLING,
    HttpBackend,
    ServerUnavailable,
    sample_seed,
    trailing_logprob,
)
from storyflow.lm.backends.llama_server import free_port
from storyflow.lm.sampling import SamplingSettings

# --- a stub server ------------------------------------------------------------------------------


class Stub:
    """Records each request (path, headers, JSON body) and answers with ``respond(body)``."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.respond: Callable[[dict[str, Any]], tuple[int, Any]] = lambda body: (200, {})
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append((self.path, dict(self.headers), body))
                status, answer = stub.respond(body)
                if status == "drop":  # close the connection without an answer
                    self.close_connection = True
                    return
                if status == "stall":  # answer after ``answer`` seconds (past the timeout)
                    time.sleep(answer)
                    status, answer = 200, completion("late", "stop")
                data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)  # a stalled answer's client may have gone

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    thread = threading.Thread(target=server.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


def completion(text: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"text": text, "finish_reason": reason, **extra}]}


def test_sample_requests_one_seed_per_sample(stub: Stub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STORYFLOW_TEST_KEY", "sk-test")
    reasons = iter(["stop", "length", "stop"])
    stub.respond = lambda body: (200, completion(f"text {body['seed']}", next(reasons)))
    backend = HttpBackend(
        stub.url + "/", "m", api_key_env="STORYFLOW_TEST_KEY", extra_body={"top_k": 0}
    )
    settings = SamplingSettings(temperature=0.7, top_p=0.9, max_tokens=5, stop=("\n",), seed=42)
    samples = backend.sample("Once", 3, settings)
    seeds = [sample_seed(42, k) for k in range(3)]
    assert [s.text for s in samples] == [f"text {seed}" for seed in seeds]
    assert [s.finish_reason for s in samples] == ["stop", "length", "stop"]
    assert [s.index for s in samples] == [0, 1, 2] and samples[0].tokens == ()
    path, headers, body = stub.requests[0]
    assert path == "/v1/completions"
    assert headers["Authorization"] == "Bearer sk-test"
    assert body == {
        "model": "m",
        "prompt": "Once",
        "n": 1,
        "max_tokens": 5,
        "temperature": 0.7,
        "top_p": 0.9,
        "seed": seeds[0],
        "stop": ["\n"],
        "top_k": 0,
    }
    # without stop strings a server's "stop" can only be the end-of-generation token
    stub.respond = lambda body: (200, completion("x", "stop"))
    (alone,) = backend.sample("Once", 1, SamplingSettings(seed=42))
    assert alone.finish_reason == "eos"
    assert "stop" not in stub.requests[-1][2]


def test_the_tokens_a_served_model_used_are_the_servers_usage_counts(
    stub: Stub, caplog: pytest.LogCaptureFixture
) -> None:
    """A served model's token count (logged by the measures: "... answers in 3.1 s, N tokens")
    is what the server reports in each answer's ``usage``, summed over requests, also with
    several in flight; a server that reports none is said once, and the count stays 0."""
    from conftest import model_entry

    from storyflow.lm.connect import open_model
    from storyflow.lm.specs import ModelSpec

    def respond(body: dict[str, Any]) -> tuple[int, Any]:
        used = {"prompt_tokens": len(body["prompt"].split()), "completion_tokens": 2}
        return 200, completion("a b", "length") | {"usage": used}

    stub.respond = respond
    server = {"base_url": stub.url, "model": "m", "concurrency": 3}
    entry = {"name": "big", "variant": "base", "roles": ["tension.forecaster"]}
    entry["source"] = {"server": server}
    model = open_model(ModelSpec.from_config(model_entry(**entry)))
    assert model.tokens_evaluated == 0
    model.sample("one two three", 4, SamplingSettings(max_tokens=2, seed=1))
    assert model.tokens_evaluated == 4 * (3 + 2)
    model.sample("four five", 2, SamplingSettings(max_tokens=2, seed=1))
    assert model.tokens_evaluated == 4 * 5 + 2 * (2 + 2)
    stub.respond = lambda body: (200, completion("a b", "length"))  # no usage
    backend = HttpBackend(stub.url, "m", concurrency=2)
    backend.sample("one two", 3, SamplingSettings(max_tokens=2, seed=1))
    assert backend.tokens_evaluated == 0 and backend.unreported == 3
    said = [r.getMessage() for r in caplog.records if "reports no token usage" in r.message]
    assert said == [
        f"{stub.url} (model m) reports no token usage in its answers: tokens not reported by "
        "the server, so this model's token counts in logs and cost tables stay 0"
    ]


def test_sample_seed_depends_only_on_seed_and_index() -> None:
    seeds = {sample_seed(s, k) for s in range(3) for k in range(50)}
    assert len(seeds) == 150 and all(0 <= s < 2**32 for s in seeds)
    assert sample_seed(7, 3) == sample_seed(7, 3)


def test_answer_reads_the_options_trailing_tokens(stub: Stub) -> None:
    # echoed prompt "Q: A?" + option, then one generated token (usage.completion_tokens = 1)
    def respond(body: dict[str, Any]) -> tuple[int, Any]:
        assert body["echo"] is True and body["max_tokens"] == 1 and body["logprobs"] == 1
        option = body["prompt"].removeprefix("Q: A?")
        pieces = {"Yes": ["Yes"], " no way": [" no", " way"]}[option]
        tokens = ["Q", ":", " A", "?", *pieces, "!"]
        logprobs = [None, -1.0, -2.0, -0.5, *[-0.25 * (i + 1) for i in range(len(pieces))], -9.0]
        scored = {"tokens": tokens, "token_logprobs": logprobs}
        return 200, {
            "choices": [{"text": "", "finish_reason": "length", "logprobs": scored}],
            "usage": {"completion_tokens": 1},
        }

    stub.respond = respond
    result = HttpBackend(stub.url, "m").answer("Q: A?", {"yes": ["Yes"], "no": [" no way"]})
    assert result.variant_logprobs == ((-0.25,), (-0.75,))
    assert sum(result.probs) == pytest.approx(1.0)


def test_trailing_tokens_must_make_up_the_option() -> None:
    tokens, logprobs = ["Q", "?", " Y", "es"], [None, -1.0, -2.0, -3.0]
    assert trailing_logprob(tokens, logprobs, " Yes", "here") == -5.0
    with pytest.raises(StoryflowError, match="not a whole number of tokens"):
        trailing_logprob(["Q", "? Y", "es"], [None, -1.0, -3.0], " Yes", "here")
    with pytest.raises(StoryflowError, match="not a whole number of tokens"):
        trailing_logprob(["Yes"], [None], "Yes", "here")  # the first token has no log-prob


def test_server_without_prompt_logprobs_is_a_clear_error(stub: Stub) -> None:
    stub.respond = lambda body: (200, completion("", "length", logprobs=None))
    with pytest.raises(StoryflowError, match="returned no prompt log-probabilities"):
        HttpBackend(stub.url, "m", answers="echo").answer("Q", ["A", "B"])
    with pytest.raises(StoryflowError, match="no top log-probabilities of the first token"):
        HttpBackend(stub.url, "m").answer("Q", ["A", "B"])  # auto: echo refused, then top


def test_auto_falls_back_to_the_first_tokens_top_logprobs(stub: Stub) -> None:
    """A server that returns no prompt log-probabilities (echo) is asked for the top
    log-probabilities of one generated token, from the first question on."""

    def respond(body: dict[str, Any]) -> tuple[int, Any]:
        if body.get("echo"):
            return 200, completion("", "length", logprobs=None)
        top = {"Yes": -0.2, "No": -2.0, " yes": -3.0, "Maybe": -4.0}
        return 200, completion("Yes", "length", logprobs={"top_logprobs": [top]})

    stub.respond = respond
    backend = HttpBackend(stub.url, "m")
    result = backend.answer("Q?", {"yes": ["Yes", "yes"], "no": ["No", "no"]})
    assert backend.answer_method == "top_logprobs"
    assert result.variant_logprobs[0] == (-0.2, float("-inf"))
    assert result.probs[0] == pytest.approx(1 / (1 + math.exp(-1.8)))
    assert result.mass == pytest.approx(math.exp(-0.2) + math.exp(-2.0))
    backend.answer("Q2?", ["Yes", "No"])
    assert sum(1 for _, _, body in stub.requests if body.get("echo")) == 1  # probed once


def test_chat_api_sends_messages_and_reads_the_first_token(stub: Stub) -> None:
    from storyflow.lm.prompts import Messages

    def respond(body: dict[str, Any]) -> tuple[int, Any]:
        if "top_logprobs" in body:
            listed = [{"token": "No", "logprob": -0.1}, {"token": "Yes", "logprob": -2.5}]
            choice = {
                "message": {"content": "No"},
                "finish_reason": "length",
                "logprobs": {"content": [{"token": "No", "top_logprobs": listed}]},
            }
        else:
            choice = {"message": {"content": "The end."}, "finish_reason": "stop"}
        return 200, {"choices": [choice]}  # fmt: skip

    stub.respond = respond
    backend = HttpBackend(stub.url, "m", api="chat")
    prompt = Messages((("system", "Be brief."), ("user", "Does it end well?")))
    result = backend.answer(prompt, ["Yes", "No"])
    assert result.best == "No" and result.probs[1] == pytest.approx(1 / (1 + math.exp(-2.4)))
    (sample,) = backend.sample(prompt, 1, SamplingSettings(seed=4))
    assert (sample.text, sample.finish_reason) == ("The end.", "eos")
    paths = [path for path, _, _ in stub.requests]
    assert paths == ["/v1/chat/completions"] * 2
    assert stub.requests[0][2]["messages"][1] == {"role": "user", "content": "Does it end well?"}


def test_top_logprobs_in_the_chat_shape_from_the_completions_endpoint(stub: Stub) -> None:
    """llama.cpp's C++ llama-server answers /v1/completions with the chat endpoint's logprobs
    shape ({"content": [{"top_logprobs": [{"token", "logprob"}]}]}); it was an error."""
    listed = [{"id": 1, "token": "No", "logprob": -0.2}, {"id": 2, "token": "Yes", "logprob": -1.9}]
    scored = {"content": [{"id": 1, "token": "No", "logprob": -0.2, "top_logprobs": listed}]}
    stub.respond = lambda body: (200, completion("No", "length", logprobs=scored))
    result = HttpBackend(stub.url, "m", answers="top_logprobs").answer("Q", ["Yes", "No"])
    assert result.variant_logprobs == ((-1.9,), (-0.2,))
    assert stub.requests[0][0] == "/v1/completions" and stub.requests[0][2]["logprobs"] == 20


def test_auto_falls_back_when_the_server_refuses_echo(stub: Stub) -> None:
    """llama-server refuses echo with HTTP 400 "Unsupported param: echo": auto reads the top
    log-probabilities instead (from then on), it does not stop the job."""

    def respond(body: dict[str, Any]) -> tuple[int, Any]:
        if body.get("echo"):
            return 400, {"error": {"code": 400, "message": "Unsupported param: echo"}}
        return 200, completion("Yes", "length", logprobs={"top_logprobs": [{"Yes": -0.1}]})

    stub.respond = respond
    backend = HttpBackend(stub.url, "m")
    assert backend.answer("Q", ["Yes", "No"]).variant_logprobs == ((-0.1,), (float("-inf"),))
    assert backend.answer_method == "top_logprobs"


def test_answers_sharing_a_first_token_cannot_be_read_from_it(stub: Stub) -> None:
    stub.respond = lambda body: (200, completion("Y", "length", logprobs={"top_logprobs": [
        {"Y": -0.5, "N": -1.0}]}))  # fmt: skip
    with pytest.raises(StoryflowError, match="begin with the same token 'Y'"):
        HttpBackend(stub.url, "m", answers="top_logprobs").answer("Q", ["Yes", "Yeah", "No"])


def test_variants_of_one_option_count_a_shared_first_token_once(stub: Stub) -> None:
    """The tension judge's options ({"Y": ["Y", " Y", "Yes", " Yes"], ...}) with only "Y" and
    "No" listed: "Yes" would read "Y" as well; counted once, not twice (was an error)."""
    from storyflow.measures.tension.judges import YES_NO

    top = {"Y": -0.5, "No": -1.5, "The": -2.0}
    stub.respond = lambda body: (200, completion("Y", "length", logprobs={"top_logprobs": [top]}))
    result = HttpBackend(stub.url, "m", answers="top_logprobs").answer("Q", YES_NO)
    inf = float("-inf")
    assert result.variant_logprobs == ((-0.5, inf, inf, inf), (inf, inf, -1.5, inf))
    assert result.probs[0] == pytest.approx(1 / (1 + math.exp(-1.0)))
    assert result.mass == pytest.approx(math.exp(-0.5) + math.exp(-1.5))


def test_a_listed_space_is_not_the_start_of_an_answer(stub: Stub) -> None:
    """Plain prompts (" Yes"/" No" after "Answer:"): a listed " " token begins both answers
    but is not their first token; it was read for both, an error."""
    top = {" ": -0.3, " Yes": -1.0, ".": -2.0}
    stub.respond = lambda body: (200, completion(" ", "length", logprobs={"top_logprobs": [top]}))
    result = HttpBackend(stub.url, "m", answers="top_logprobs").answer("Q", [" Yes", " No"])
    assert result.variant_logprobs == ((-1.0,), (float("-inf"),))


def test_the_tokenizer_names_each_answers_first_token(stub: Stub) -> None:
    """With the served model's tokenizer (``pieces``) an answer reads its own first token: exact
    for one token, the first token's probability (an upper bound) for a longer one."""
    top = {"Ye": -0.7, "Yes": -0.9, "No": -1.1}
    stub.respond = lambda body: (200, completion("Ye", "length", logprobs={"top_logprobs": [top]}))
    vocabulary = {"Yes": ["Yes"], "Yeah": ["Ye", "ah"], "No": ["No"], "Nope": ["N", "ope"]}
    backend = HttpBackend(stub.url, "m", answers="top_logprobs", pieces=vocabulary.__getitem__)
    result = backend.answer("Q", {"yes": ["Yes", "Yeah"], "no": ["No", "Nope"]})
    assert result.variant_logprobs == ((-0.9, -0.7), (-1.1, float("-inf")))
    # without it "Yeah" is guessed from the longest listed token it starts with: "Ye" as well
    guessed = HttpBackend(stub.url, "m", answers="top_logprobs").answer("Q", ["Yeah", "No"])
    assert guessed.variant_logprobs == ((-0.7,), (-1.1,))


def test_no_listed_answer_gives_a_tie_at_the_smallest_listed_probability(stub: Stub) -> None:
    """Neither answer among the top tokens: both at most the smallest listed probability; the
    options tie (probabilities were NaN) and the mass stays small."""
    top = {"The": -0.1, "I": -2.5, "It": -4.0}
    stub.respond = lambda body: (200, completion("The", "length", logprobs={"top_logprobs": [top]}))
    result = HttpBackend(stub.url, "m", answers="top_logprobs").answer("Q", ["Yes", "No"])
    assert result.probs == pytest.approx((0.5, 0.5))
    assert result.mass == pytest.approx(2 * math.exp(-4.0))


def test_http_errors_are_clear(stub: Stub, monkeypatch: pytest.MonkeyPatch) -> None:
    stub.respond = lambda body: (500, {"error": "model not loaded"})
    with pytest.raises(StoryflowError, match=r"failed 1 times in a row, last: HTTP 500: .*loaded"):
        HttpBackend(stub.url, "m", retries=0).sample("x", 1, SamplingSettings())
    stub.respond = lambda body: (400, {"error": "bad field"})  # a client error: at once
    with pytest.raises(StoryflowError, match=r"answered HTTP 400: .*bad field"):
        HttpBackend(stub.url, "m").sample("x", 1, SamplingSettings())
    stub.respond = lambda body: (200, "<html>")
    with pytest.raises(StoryflowError, match="an answer that is not JSON: '<html>'"):
        HttpBackend(stub.url, "m", retries=0).sample("x", 1, SamplingSettings())
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    with pytest.raises(StoryflowError, match=re.escape(f"the model server at {url} (model 'm')")):
        HttpBackend(url, "m", timeout=5, retries=0).sample("x", 1, SamplingSettings())
    monkeypatch.delenv("STORYFLOW_UNSET_KEY", raising=False)
    with pytest.raises(StoryflowError, match="STORYFLOW_UNSET_KEY is not set"):
        HttpBackend(url, "m", api_key_env="STORYFLOW_UNSET_KEY")


# --- faults (issue 23.2) ------------------------------------------------------------------------

FAULTS = {
    "500": (500, {"error": "overloaded"}),
    "429": (429, {"error": "rate limited"}),
    "drop": ("drop", None),
    "stall": ("stall", 1.5),  # past the 0.5 s timeout
    "not JSON": (200, "{'choices': [trunc"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_transient_fault_is_retried_and_nothing_is_lost(stub: Stub, fault: str) -> None:
    """Each sample's request meets the fault twice, then is answered: every sample arrives, in
    order, after exactly three requests each (bounded: retries + 1)."""
    seen: dict[int, int] = {}

    def respond(body: dict[str, Any]) -> tuple[Any, Any]:
        seed = body["seed"]
        seen[seed] = seen.get(seed, 0) + 1
        if seen[seed] <= 2:
            return FAULTS[fault]
        return 200, completion(f"ending {seed}", "stop")

    stub.respond = respond
    backend = HttpBackend(stub.url, "m", timeout=0.5, concurrency=2, retries=2, backoff=0.01)
    samples = backend.sample("x", 3, SamplingSettings(seed=1))
    assert [s.text for s in samples] == [f"ending {sample_seed(1, k)}" for k in range(3)]
    assert sorted(seen.values()) == [3, 3, 3]


def test_a_server_that_stays_down_stops_with_one_bounded_message(stub: Stub) -> None:
    """Every request fails: each is sent retries + 1 times and no more, and the message names
    the server, the model, the last fault, the requests answered and what to do."""
    answered: list[int] = []

    def respond(body: dict[str, Any]) -> tuple[Any, Any]:
        if body["seed"] == sample_seed(1, 0):
            answered.append(1)
            return 200, completion("ok", "stop")
        return 503, {"error": "loading model"}

    stub.respond = respond
    backend = HttpBackend(stub.url, "qwen", retries=3, backoff=0.01)
    started = time.monotonic()
    with pytest.raises(ServerUnavailable) as err:
        backend.sample("x", 3, SamplingSettings(seed=1))
    message = str(err.value)
    assert f"the model server at {stub.url} (model 'qwen') failed 4 times" in message
    assert "HTTP 503" in message and "loading model" in message
    assert "1 of this batch's 3 requests were answered" in message
    assert "run the same command again" in message
    assert len(stub.requests) == 1 + 4  # the answered one, then 4 tries of the second, no more
    assert time.monotonic() - started < 5


def test_auto_does_not_mistake_a_server_that_is_down_for_one_without_echo() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    backend = HttpBackend(url, "m", timeout=2, retries=1, backoff=0.01)
    with pytest.raises(ServerUnavailable, match="no answer"):
        backend.answer("Q", ["Yes", "No"])
    assert backend.answer_method == "auto"


# --- a real llama.cpp server ----------------------------------------------------------------------


@contextlib.contextmanager
def llama_cpp_server(
    gguf: Path, log: Path, *, alias: str, n_ctx: int, threads: int = 1
) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on ``gguf`` at 127.0.0.1 (a free port),
    named ``alias`` (:func:`storyflow.lm.backends.llama_server.serve`); yields its base URL
    once it answers and stops it afterwards. Skips the test when the server's packages are
    not installed; a server that does not start fails it."""
    from storyflow.lm.backends.llama_server import missing_modules, serve

    missing = missing_modules()
    if missing:
        pytest.skip(f"llama-cpp-python's server packages are not installed: {missing}")
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(serve(gguf, log, alias=alias, n_ctx=n_ctx, threads=threads))
        except StoryflowError as err:
            pytest.fail(str(err))
        yield url


@pytest.fixture(scope="module")
def llama_server(packaged_models: dict[str, Path], tmp_path_factory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on SmolLM2 (127.0.0.1, a free port)."""
    log = tmp_path_factory.mktemp("server") / "server.log"
    with llama_cpp_server(packaged_models["smollm2"], log, alias="smollm2", n_ctx=512) as url:
        yield url


def letter_prompt(llm: Any, letter: str) -> str:
    from storyflow.lm.prompts import generation_prompt

    question = f"Repeat this letter and nothing else: {letter}"
    return generation_prompt(llm, [{"role": "user", "content": question}])


@pytest.mark.slow
def test_server_answers_equal_in_process_scoring(
    llama_server: str, packaged_models: dict[str, Path]
) -> None:
    from storyflow.lm.answers import answer
    from storyflow.lm.backends.llama_cpp import LlamaCppScorer

    scorer = LlamaCppScorer(packaged_models["smollm2"], n_ctx=512, n_threads=1)
    backend = HttpBackend(llama_server, "smollm2")
    # llama-cpp-python's server sorts the whole vocabulary in Python for every echoed token:
    # about 2 s per request for this 40-token prompt, so few requests here
    options = {"A": ["A"], "B": ["B", "The letter B"]}
    prompt = letter_prompt(scorer.llm, "B")
    served, local = backend.answer(prompt, options), answer(scorer, prompt, options)
    assert served.best == local.best == "B"
    # float32 log-probs of the same logits: measured |diff| <= 4e-7 nats (21 variants, 3 prompts)
    for a, b in zip(served.variant_logprobs, local.variant_logprobs, strict=True):
        assert a == pytest.approx(b, abs=1e-5)
    assert served.probs == pytest.approx(local.probs, abs=1e-5)
    assert served.mass == pytest.approx(local.mass, rel=1e-5)


@pytest.mark.slow
def test_server_greedy_and_seeded_samples(
    llama_server: str, packaged_models: dict[str, Path]
) -> None:
    from storyflow.lm.backends.llama_cpp_sampler import LlamaCppSampler
    from storyflow.lm.prompts import generation_prompt

    local = LlamaCppSampler(packaged_models["smollm2"], n_ctx=512, n_seq=1, n_threads=1)
    backend = HttpBackend(llama_server, "smollm2", extra_body=LLAMA_CPP_PLAIN_SAMPLING)

    def fresh() -> None:
        """Make the server forget its cached prompt: it re-decodes the next prompt whole.

        (It reuses the longest cached prefix of its previous request and decodes the rest, at
        least the last prompt token, alone; that token's logits then differ slightly from a
        whole-prompt decode: 0.007 nats on SmolLM2's first generated token, measured.)"""
        backend.post("/completions", {"prompt": "Hello", "max_tokens": 1})

    for question in ("What is 2 + 2?", "Write one sentence about the sea."):
        prompt = generation_prompt(local.vocab.llm, [{"role": "user", "content": question}])
        greedy = SamplingSettings(temperature=0, max_tokens=20)
        fresh()
        (served,) = backend.sample(prompt, 1, greedy)
        (ours,) = local.sample(prompt, 1, greedy)
        assert (served.text, served.finish_reason) == (ours.text, ours.finish_reason)
    stopped = SamplingSettings(temperature=0, max_tokens=20, stop=(" is",))
    fresh()
    assert backend.sample(prompt, 1, stopped)[0].text == local.sample(prompt, 1, stopped)[0].text
    # seeded samples repeat on the server (its own sampler: not the in-process texts)
    seeded = SamplingSettings(temperature=0.9, max_tokens=12, seed=5)
    fresh()
    first = backend.sample(prompt, 2, seeded)
    fresh()
    assert backend.sample(prompt, 2, seeded) == first
    assert first[0].text != first[1].text


def test_a_job_stopped_by_a_server_that_stays_down_resumes_without_asking_twice(
    stub: Stub, tmp_path: Path
) -> None:
    """A job (storyflow.runner.run) that samples one ending per prompt from a served model:
    the server fails from the fourth prompt on, past every retry; the job stops with one
    message and keeps the three answers in its progress file. Run again against a healthy
    server, it asks only the three prompts left, and its output is the uninterrupted run's."""
    from types import SimpleNamespace

    from conftest import model_entry

    from storyflow import runner
    from storyflow.lm.connect import open_model
    from storyflow.lm.specs import ModelSpec

    server = {"base_url": stub.url, "model": "m", "retries": 1, "backoff": 0.01, "timeout": 2}
    spec = ModelSpec.from_config(model_entry(name="m", roles=[], source={"server": server}))
    prompts = [f"Story {i}:" for i in range(6)]
    healthy = lambda body: (200, completion(f"end of {body['prompt']}", "stop"))  # noqa: E731
    job = SimpleNamespace(rule="sample", output=[str(tmp_path / "endings.json")], input=[],
                          params={"k": 1}, log=[str(tmp_path / "sample.log")])  # fmt: skip

    def main(smk: Any) -> None:
        model = open_model(spec)
        texts = [model.sample(p, 1, SamplingSettings(seed=3))[0].text for p in prompts]
        Path(smk.output[0]).write_text(json.dumps(texts))

    stub.respond = lambda body: healthy(body) if len(stub.requests) <= 3 else (503, "down")
    with pytest.raises(SystemExit):
        runner.run(main, job)
    log = Path(job.log[0]).read_text()
    assert f"the model server at {stub.url} (model 'm') failed 2 times" in log
    assert "the 3 answers it has are kept" in log and "run the same command again" in log
    assert not Path(job.output[0]).exists()
    asked_before = len(stub.requests)
    stub.respond = healthy
    runner.run(main, job)
    again = [body["prompt"] for _, _, body in stub.requests[asked_before:]]
    assert again == prompts[3:]  # only the prompts without an answer
    assert json.loads(Path(job.output[0]).read_text()) == [f"end of {p}" for p in prompts]
    assert "3 answers asked in this run, 3 replayed" in Path(job.log[0]).read_text()
