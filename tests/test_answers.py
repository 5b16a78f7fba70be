"""Closed-choice answers: option checks, the probability formulas, and a real model's choices."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from scipy.special import log_softmax

from storyflow.errors import StoryflowError
from storyflow.lm.answers import ClosedAnswer, answer, answers, option_variants


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("Yes", "not the string"),
        (["Yes"], "at least two options"),
        (["Yes", ""], "non-empty strings"),
        ({"yes": ["Yes"], "no": []}, "non-empty strings"),
        (["Yes", "Yes"], "more than once"),
        ({"yes": ["Yes", "OK"], "no": ["No", "OK"]}, "more than once"),
    ],
)
def test_invalid_options_are_clear_errors(options: object, message: str) -> None:
    with pytest.raises(StoryflowError, match=message):
        option_variants(options)  # type: ignore[arg-type]


def test_options_and_variants_are_normalised() -> None:
    assert option_variants(["A", "B"]) == (("A", "B"), (("A",), ("B",)))
    assert option_variants({"yes": ["Yes", " yes"], "no": "No"}) == (
        ("yes", "no"),
        (("Yes", " yes"), ("No",)),
    )


def test_variant_probabilities_add_up_and_renormalise() -> None:
    result = ClosedAnswer.from_variant_logprobs(
        ["yes", "no"], [["Yes", "yes"], ["No"]], [[-1.0, -2.0], [-3.0]]
    )
    p_yes, p_no = math.exp(-1) + math.exp(-2), math.exp(-3)
    assert result.logprobs == pytest.approx((math.log(p_yes), -3.0), abs=1e-12)
    assert result.probs == pytest.approx((p_yes / (p_yes + p_no), p_no / (p_yes + p_no)))
    assert sum(result.probs) == pytest.approx(1.0, abs=1e-12)
    assert result.mass == pytest.approx(p_yes + p_no, abs=1e-12)
    assert result.best == "yes"


class LetterScorer:
    """A toy scorer: one token per character, ln p(token) = -(its position + 1) / 10."""

    def __init__(self) -> None:
        self.requests: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    def tokenize(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    @property
    def start_token(self) -> int:
        return 0

    def logprobs(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        self.requests.append((tuple(prefix), tuple(continuation)))
        return -(np.arange(len(continuation)) + 1) / 10


def test_answer_sums_every_token_and_keeps_a_prompts_requests_together() -> None:
    scorer = LetterScorer()
    out = answers(scorer, [[0, 7], [0, 8]], {"long": ["abc"], "short": ["d", "e"]})
    first = out[0]
    assert first.variant_logprobs == ((pytest.approx(-0.6),), (-0.1, -0.1))  # 0.1+0.2+0.3
    assert first.logprobs[1] == pytest.approx(math.log(2 * math.exp(-0.1)))
    assert out[1] == first
    prefixes = [prefix for prefix, _ in scorer.requests]
    assert prefixes == [(0, 7)] * 3 + [(0, 8)] * 3
    with pytest.raises(StoryflowError, match="no llama\\.cpp tokenizer"):
        answer(scorer, "a text prompt", ["A", "B"])


# --- a real model -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2(packaged_models: dict[str, Path]):
    from storyflow.lm.backends.llama_cpp import LlamaCppScorer

    return LlamaCppScorer(packaged_models["smollm2"], n_ctx=256, n_threads=1)


def copy_prompt(llm, letter: str) -> str:
    from storyflow.lm.prompts import generation_prompt

    question = f"Repeat this letter and nothing else: {letter}"
    return generation_prompt(llm, [{"role": "user", "content": question}])


@pytest.mark.slow
def test_smollm2_answers_the_copy_task(smollm2) -> None:
    for letter in ("A", "B", "C"):
        result = answer(smollm2, copy_prompt(smollm2.llm, letter), ["A", "B", "C", "D"])
        print(letter, result.probs, result.mass)
        assert result.best == letter
        assert result.probs[result.options.index(letter)] > 0.5
        assert sum(result.probs) == pytest.approx(1.0, abs=1e-12)
        assert 0 < result.mass <= 1


@pytest.mark.slow
def test_multi_token_option_is_the_sum_of_a_fresh_pass(smollm2) -> None:
    from storyflow.lm.prompts import prompt_tokens

    prompt = copy_prompt(smollm2.llm, "B")
    options = ["The letter B", "B"]
    result = answer(smollm2, prompt, options)
    ids = prompt_tokens(smollm2.llm, prompt)
    option_ids = smollm2.tokenize("The letter B")
    assert len(option_ids) == 3
    # reference: one pass over prompt + option from an empty cache, log-softmax of every row
    sequence = ids + option_ids
    smollm2.llm.reset()
    smollm2.llm.eval(sequence)
    smollm2._stem = None  # the scorer's cached stem is gone
    rows = np.asarray(smollm2.llm.scores[len(ids) - 1 : len(sequence) - 1], dtype=np.float64)
    expected = log_softmax(rows, axis=1)[np.arange(len(option_ids)), option_ids].sum()
    assert result.logprobs[0] == pytest.approx(expected, abs=1e-3)
    assert result.logprobs[0] < result.logprobs[1]
    # given as token ids, the same answer
    assert answer(smollm2, ids, options).logprobs == pytest.approx(result.logprobs, abs=1e-9)


@pytest.mark.slow
def test_variants_add_up_on_a_real_model(smollm2) -> None:
    prompt = copy_prompt(smollm2.llm, "B")
    single = answer(smollm2, prompt, ["B", "b", "A", "a"])
    both = answer(smollm2, prompt, {"b": ["B", "b"], "a": ["A", "a"]})
    lp = dict(zip(single.options, single.logprobs, strict=True))
    assert both.logprobs[0] == pytest.approx(np.logaddexp(lp["B"], lp["b"]), abs=1e-9)
    assert both.logprobs[1] == pytest.approx(np.logaddexp(lp["A"], lp["a"]), abs=1e-9)
    assert both.mass == pytest.approx(single.mass, rel=1e-9)
    assert both.probs[0] > 0.5


# --- transformers on the SmolLM2 checkpoint: answers in padded batches ---------------------------

QUESTIONS = (
    "Repeat this letter and nothing else: ",
    "Here is a letter. Repeat this letter and nothing else: ",
    "I will give you one capital letter of the alphabet. Repeat it and write nothing else: ",
)


@pytest.mark.slow
def test_checkpoint_answers_in_padded_batches_equal_one_at_a_time(
    smollm2_checkpoint: Path,
) -> None:
    """A model opened to ask its prompts together (``share_prefix``, as the readers and the
    tension judge are) scores a call's prompts as rows of padded batches; the answers are the
    one-at-a-time scorer's (the prompt's cache reused, each option on top of it) within float32
    arithmetic on matrices of other shapes."""
    from storyflow.lm.backends.transformers import TransformersScorer
    from storyflow.lm.connect import open_model
    from storyflow.lm.prompts import generation_prompt
    from storyflow.lm.specs import ModelSpec

    spec = ModelSpec.local("smollm2-hf", backend="transformers", prompt="chat")
    model = open_model(spec, smollm2_checkpoint, n_threads=2, share_prefix=True)
    llm = model.vocab.llm
    letters = "ABCDABCDABCDABCDAB"
    # questions of three lengths, so that the rows of a batch differ in length
    prompts = [
        generation_prompt(llm, [{"role": "user", "content": QUESTIONS[i % 3] + letter}])
        for i, letter in enumerate(letters)
    ]
    options = {"A": ["A", " A"], "B": ["B"], "C": ["C", "The letter C"], "D": ["D"]}
    together = model.answers(prompts, options)
    scorer = model.scorer(branches=True)
    assert isinstance(scorer, TransformersScorer) and scorer.n_seq == 16
    assert scorer.tokens_padded > scorer.tokens_evaluated > 0  # padded rows, padding counted
    single = TransformersScorer(smollm2_checkpoint, n_threads=2, vocab=model.vocab)
    alone = answers(single, prompts, options)
    gaps = [
        abs(a - b)
        for x, y in zip(together, alone, strict=True)
        for xs, ys in zip(x.variant_logprobs, y.variant_logprobs, strict=True)
        for a, b in zip(xs, ys, strict=True)
    ]
    print(f"padded vs one at a time: max |diff| {max(gaps):.2e} nats over {len(gaps)} variants")
    assert max(gaps) <= 1e-4
    assert [x.best for x in together] == [y.best for y in alone]
    assert sum(x.best == letter for x, letter in zip(together, letters, strict=True)) >= 14
