"""The transformers backend against llama.cpp on the same weights and real sentences.

This is also how a user checks a new model: score a few stories with both backends and compare
per-term NLLs (correlation and mean absolute difference).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from storyflow.lm.backends.llama_cpp import LlamaCppScorer, VocabOnly
from storyflow.lm.nll.engine import score_terms
from storyflow.lm.nll.planning import tokenize_story


def test_unknown_dtype_is_a_clear_error() -> None:
    """The dtypes (and backends) are the config schema's, checked once there."""
    from conftest import model_entry
    from snakemake.exceptions import WorkflowError

    with pytest.raises(WorkflowError):
        model_entry(dtype="float8")
    with pytest.raises(WorkflowError):
        model_entry(backend="vllm")


@pytest.mark.slow
def test_transformers_matches_llama_cpp_on_the_same_gguf(
    packaged_models: dict[str, Path], hippocorpus: pd.DataFrame, nlp
) -> None:
    from storyflow.lm.backends.transformers import TransformersScorer
    from storyflow.sentences import split_sentences

    path = packaged_models["smollm2"]  # llama architecture: transformers reads it from GGUF
    stories = hippocorpus.assign(n=hippocorpus["story"].str.len()).nsmallest(1, "n")
    frame = pd.DataFrame({"story_id": stories["AssignmentId"], "text": stories["story"]})
    sentences = split_sentences(frame, nlp)
    vocab = VocabOnly(path)
    llama = LlamaCppScorer(path, n_ctx=1024, n_threads=2)
    torch_scorer = TransformersScorer(path, dtype="float32", n_threads=2)
    assert torch_scorer.start_token == vocab.start_token
    ours, theirs = [], []
    for story in stories.itertuples():
        texts = list(sentences.loc[sentences["story_id"] == story.AssignmentId, "text"])[:6]
        tokens = tokenize_story(vocab, story.AssignmentId, texts, story.summary)
        assert [torch_scorer.tokenize(" " + t) for t in texts] == tokens.sentences
        for formulation in ("topic", "context"):
            prefix = tokens.prefix(formulation, vocab.start_token)
            a = score_terms(llama, prefix, tokens.sentences, max_history=2, capacity=1024)
            b = score_terms(torch_scorer, prefix, tokens.sentences, 2, 1024)
            for key in a:
                ours.append(a[key].nll)
                theirs.append(b[key].nll)
    ours_a, theirs_a = np.array(ours), np.array(theirs)
    r = np.corrcoef(ours_a, theirs_a)[0, 1]
    mad = np.abs(ours_a - theirs_a).mean()
    # Same quantized weights (transformers dequantizes Q4_1 exactly); what differs is the
    # arithmetic: llama.cpp quantizes activations to 8 bits for its Q4 matrix products and keeps
    # the KV cache in float16, transformers computes in float32. Measured on this story's 6
    # sentences (both formulations, h = 0..2 and full): r = 0.9994, mean |diff| = 0.021
    # nats/token, i.e. within the noise that quantizing activations adds. The bounds leave room
    # for other stories without admitting a real error (a wrong context or an off-by-one shift
    # moves NLLs by whole nats/token and r far below 0.99).
    print(f"transformers vs llama.cpp: r = {r:.5f}, mean |diff| = {mad:.4f} nats/token")
    assert r >= 0.995, (r, mad)
    assert mad <= 0.05, (r, mad)


def test_the_registered_backends_are_the_ones_a_config_can_name() -> None:
    """One registry (storyflow.lm.backends.registry): every backend a config may write, and
    ``server`` (a served model's), is registered once; an unknown name stops with the list."""
    from conftest import REPO, model_entry

    from storyflow.config_files import load_schema
    from storyflow.errors import StoryflowError
    from storyflow.lm.backends.registry import BACKENDS, open_backend
    from storyflow.lm.specs import ModelSpec

    schema = load_schema(REPO / "workflow/schemas/config.schema.yaml")
    allowed = schema["properties"]["models"]["items"]["properties"]["backend"]["enum"]
    assert set(BACKENDS) == {*allowed, "server"} - {"auto"}
    spec = ModelSpec.from_config(model_entry(name="m"))
    assert type(open_backend(spec, "m.gguf")).name == "llama.cpp"
    with pytest.raises(StoryflowError, match=r"no backend 'vllm' \(registered: llama\.cpp"):
        open_backend(dataclasses.replace(spec, backend="vllm"))


def test_a_served_models_roles_share_one_client() -> None:
    """Answers and samples of a served model go through one HTTP client (its scorer too,
    test_served_nll), so the tokens its server reports are counted once for the job."""
    from conftest import model_entry

    from storyflow.lm.connect import open_model
    from storyflow.lm.specs import ModelSpec

    server = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "tokenizer": None}
    spec = ModelSpec.from_config(
        model_entry(name="m", roles=["tension.forecaster"], source={"server": server})
    )
    model = open_model(spec)
    assert model._open_answerer() is model._open_sampler() is model.backend.http
    assert model.backend.tokens_evaluated == model.tokens_evaluated == 0


# --- a GPU asked for where there is none (issue 48) -------------------------------------------


def _no_gpu(backend: str) -> None:
    """Skip where this node has a GPU the backend can use (the check then lets it through)."""
    from storyflow.lm.backends.device import gpu_problem

    if gpu_problem(backend) is None:
        pytest.skip(f"this node's {backend} has a GPU: nothing to refuse")


@pytest.mark.parametrize("backend", ["llama.cpp", "transformers"])
def test_a_gpu_asked_for_where_there_is_none_stops_before_any_weight_loads(
    packaged_models: dict[str, Path], backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One message naming the model, what it asks, the node and what the node has, and the
    fix; llama.cpp used to run on the CPU under a GPU label, transformers to fail after
    loading with torch's AssertionError."""
    import socket

    from storyflow.errors import StoryflowError
    from storyflow.lm.connect import open_model
    from storyflow.lm.specs import ModelSpec

    _no_gpu(backend)
    spec = ModelSpec.local("mine", backend=backend, n_gpu_layers=-1)
    model = open_model(spec, packaged_models["smollm2"])
    assert model.vocab.tokenize("Once upon a time")  # planning needs no GPU: it opens
    loads = []
    if backend == "transformers":
        import transformers

        monkeypatch.setattr(
            transformers.AutoModelForCausalLM, "from_pretrained", lambda *a, **k: loads.append(a)
        )
    with pytest.raises(StoryflowError) as caught:
        model.scorer(n_ctx=256)
    message = str(caught.value)
    assert message.startswith(
        f"model 'mine' asks for the GPU (device.n_gpu_layers: -1, backend {backend}), but node "
        f"{socket.gethostname()} cannot give it one: "
    )
    has = "finds no GPU device" if backend == "llama.cpp" else "is built without CUDA"
    assert has in message and "device.n_gpu_layers: 0" in message and "CUDA build" in message
    with pytest.raises(StoryflowError, match="asks for the GPU"):
        model._open_sampler()
    assert not loads  # refused before the weights were read
    on_cpu = open_model(dataclasses.replace(spec, device={**spec.device, "n_gpu_layers": 0}),
                        packaged_models["smollm2"])  # fmt: skip
    assert on_cpu.placement().device == "cpu"


def test_an_nll_job_asking_for_a_missing_gpu_writes_one_message_and_no_scores(
    packaged_models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job as a cluster runs it (rule score_nll_shard's script): exit 1, the message in
    its log, no traceback, no NLL table labelled with a device it did not run on."""
    from types import SimpleNamespace

    from conftest import defaults, model_entry, run_script

    from storyflow import tables
    from storyflow.lm.specs import ModelSpec

    _no_gpu("llama.cpp")
    entry = model_entry(name="mine", device={"n_gpu_layers": -1})
    stories, sentences = tmp_path / "stories.parquet", tmp_path / "sentences.parquet"
    tables.STORIES.frame(
        [tables.STORIES.row(story_id="s", story_type="t", text="A b.", topic=None, has_topic=False)]
    ).to_parquet(stories)
    tables.SENTENCES.frame(
        [tables.SENTENCES.row(story_id="s", sentence_idx=0, text="Once upon a time.")]
    ).to_parquet(sentences)
    log, out = tmp_path / "shard.log", tmp_path / "shard.parquet"
    with pytest.raises(SystemExit) as exited:
        run_script(
            "score_nll",
            log=[str(log)],
            threads=2,
            wildcards=SimpleNamespace(shard="000", model="mine", corpus="c"),
            input=SimpleNamespace(
                weights=str(packaged_models["smollm2"]), stories=stories, sentences=sentences
            ),
            output=SimpleNamespace(nll=str(out)),
            params=SimpleNamespace(
                settings={**defaults("nll"), "n_gpu_layers": -1},
                model=ModelSpec.from_config(entry).scoring_settings(),
                n_shards=1,
            ),
            config={"models": [entry]},
        )
    assert exited.value.code == 1
    text = log.read_text()
    assert "model 'mine' asks for the GPU (device.n_gpu_layers: -1, backend llama.cpp)" in text
    assert "Traceback" not in text and "Traceback" not in capsys.readouterr().err
    assert not out.exists()
