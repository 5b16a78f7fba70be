"""Sampling: the token rule on constructed logits, seeding, stop strings, and the real samplers.

The fast tests drive ``storyflow.lm.sampling`` with constructed logits and a toy model; the slow
ones sample from the packaged models with llama.cpp (batched against one sequence at a time) and
transformers, and render prompts with the models' own templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from storyflow.errors import StoryflowError
from storyflow.lm.sampling import (
    RANKED_HEAD,
    Sample,
    SamplingSettings,
    choose_token,
    choose_tokens,
    first_stop,
    generate,
    ranked,
    sequence_rng,
)

# --- settings -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sampling",
    [
        {"temperature": 0},
        {"top_p": 0.0},
        {"top_p": 1.5},
        {"max_tokens": 0},
        {"max_tokens": 2.5},
        {"stop": "\n"},
        {"stop": [""]},
        {"seed": -1},
    ],
)
def test_the_schema_checks_the_sampling_ranges(sampling: dict) -> None:
    """The config's sampling settings are checked once, by the schema; the sampler does not
    check them again."""
    from conftest import schema_defaults
    from snakemake.exceptions import WorkflowError

    config = {"models": [{"name": "m", "source": {"path": "m.gguf"}}]}
    with pytest.raises(WorkflowError):
        schema_defaults({**config, "tension": {"sampling": sampling}})


def test_config_sampling_settings_are_built_from_the_validated_block() -> None:
    from conftest import defaults

    from storyflow.measures.tension.forecast import sampling_settings

    block = defaults("tension", "sampling")
    settings = sampling_settings(block)
    assert settings == SamplingSettings(
        temperature=block["temperature"],
        top_p=block["top_p"],
        max_tokens=block["max_tokens"],
        stop=(),
        seed=block["seed"],
    )


def test_greedy_settings_are_valid() -> None:
    settings = SamplingSettings(temperature=0, top_p=1, max_tokens=1, stop=("\n",), seed=0)
    assert settings.temperature == 0


# --- the token rule -----------------------------------------------------------------------------


def logits_of(probs: Sequence[float]) -> np.ndarray:
    return np.log(np.asarray(probs, dtype=np.float64))


def test_temperature_zero_is_argmax_and_draws_nothing() -> None:
    rng = sequence_rng(1, 0)
    before = rng.bit_generator.state
    logits = np.array([0.5, 3.0, 3.0, -1.0], dtype=np.float32)
    assert choose_token(logits, 0.0, 1.0, rng) == 1  # the lower id among tied maxima
    assert rng.bit_generator.state == before


def test_small_temperature_tends_to_argmax() -> None:
    rng = sequence_rng(2, 0)
    logits = logits_of([0.3, 0.25, 0.45])  # close probabilities, argmax 2
    picks = {choose_token(logits, 0.01, 1.0, rng) for _ in range(200)}
    assert picks == {2}  # at T = 0.01 the others have probability below e^-18


def test_top_p_keeps_the_smallest_set_reaching_p() -> None:
    logits = logits_of([0.15, 0.5, 0.05, 0.3])  # ranked: 1 (0.5), 3 (0.3), 0 (0.15), 2 (0.05)
    rng = sequence_rng(3, 0)

    def drawn(top_p: float) -> set[int]:
        return {choose_token(logits, 1.0, top_p, rng) for _ in range(400)}

    assert drawn(0.45) == {1}
    assert drawn(0.79) == {1, 3}
    assert drawn(0.81) == {1, 3, 0}
    assert drawn(1.0) == {1, 3, 0, 2}


def test_draws_follow_the_tempered_nucleus_distribution() -> None:
    logits = np.array([2.0, 1.0, 0.0, -1.0])
    rng = sequence_rng(4, 0)
    n = 20_000
    counts = np.bincount([choose_token(logits, 2.0, 0.85, rng) for _ in range(n)], minlength=4)
    tempered = np.exp(logits / 2.0) / np.exp(logits / 2.0).sum()  # 0.455, 0.276, 0.167, 0.102
    expected = np.array([*tempered[:3], 0.0]) / tempered[:3].sum()  # nucleus 0.85: 0..2 (0.898)
    sigma = np.sqrt(expected * (1 - expected) / n)
    assert counts[3] == 0
    assert np.all(np.abs(counts / n - expected) <= 4 * sigma + 1e-12), (counts / n, expected)


def test_a_draw_is_the_quantile_of_the_ranked_distribution() -> None:
    # u is the sample's first uniform number: the token is where u falls in the ranked cumsum
    u = sequence_rng(5, 0).random()
    probs = np.array([0.1, 0.2, 0.4, 0.3])  # ranked: 2, 3, 1, 0; cumulative 0.4, 0.7, 0.9, 1.0
    expected = [2, 3, 1, 0][int(np.searchsorted([0.4, 0.7, 0.9, 1.0], u, side="right"))]
    assert choose_token(logits_of(probs), 1.0, 1.0, sequence_rng(5, 0)) == expected


@pytest.mark.parametrize("top_p", [1.0, 0.95])
def test_a_rows_token_is_the_same_alone_or_among_others(top_p: float) -> None:
    """choose_tokens reads each row on its own: a row drawn alone, among 15 others, or by two
    threads gives the same token for the same uniform number (what keeps batched and
    one-at-a-time samples equal where their logits are)."""
    rng = np.random.default_rng(7)
    logits = (rng.standard_normal((16, 50_000)) * 3).astype(np.float32)
    logits[:, :40] += 9  # a peaked head and a long tail, as a language model's
    uniforms = rng.random(16)
    together = choose_tokens(logits, 1.2, top_p, uniforms)
    threaded = choose_tokens(logits, 1.2, top_p, uniforms, workers=2)
    alone = [
        choose_tokens(logits[r : r + 1], 1.2, top_p, uniforms[r : r + 1])[0] for r in range(16)
    ]
    assert list(together) == list(threaded) == alone
    assert len(set(together)) > 1  # the rows really differ


def test_ranked_head_is_the_start_of_the_full_ranking() -> None:
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.full(5 * RANKED_HEAD, 0.05))
    probs[[10, 20, 30]] = probs.max()  # ties: ranked by id
    full = np.argsort(-probs, kind="stable")
    for mass in (0.5, 0.99, 1.0):  # the head suffices, or the whole vocabulary is sorted
        ids, cumulative = ranked(probs, mass)
        assert list(ids) == list(full[: len(ids)])
        np.testing.assert_array_equal(cumulative, np.cumsum(probs[full])[: len(ids)])
        assert cumulative[-1] > mass or len(ids) == len(probs)
    assert list(ranked(probs, 0.5)[0][:3]) == [10, 20, 30]
    assert len(ranked(probs, 0.5)[0]) < len(probs)


def test_each_sample_has_its_own_stream() -> None:
    a, b, c = sequence_rng(7, 0).random(4), sequence_rng(7, 0).random(4), sequence_rng(7, 1)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c.random(4))
    assert not np.allclose(a, sequence_rng(8, 0).random(4))


# --- ends and the generation loop (a toy model) -------------------------------------------------

VOCAB = ["<eos>", "a", "b", "c", "\n", "STO", "P", " "]  # token id -> text
EOS = 0


def toy_decode(tokens: Sequence[int]) -> str:
    return "".join(VOCAB[t] for t in tokens)


class ToyModel:
    """Logits that depend on a sequence's last token only (so samples are independent)."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = table  # row = last token, columns = next-token logits
        self.fed: list[list[int]] = []

    def step(self, slots: Sequence[int], tokens: Sequence[int]) -> np.ndarray:
        self.fed.append(list(slots))
        return self.table[list(tokens)]


def test_stop_string_split_across_tokens_cuts_the_text() -> None:
    table = np.full((len(VOCAB), len(VOCAB)), -30.0)
    table[1, 5] = table[5, 6] = table[6, 2] = 0.0  # a -> STO -> P -> b (greedy)
    settings = SamplingSettings(temperature=0, max_tokens=10, stop=("OP",))
    prompt_row = np.full(len(VOCAB), -30.0)
    prompt_row[1] = 0.0  # the first token is "a"
    (sample,) = generate(prompt_row, [0], settings, toy_decode, {EOS}, ToyModel(table).step)
    assert sample == Sample(0, "aST", (1, 5, 6), "stop")  # "OP" spans "STO" + "P"
    assert first_stop("xx\nyyOP", ("OP", "\n")) == 2
    assert first_stop("abc", ("d",)) is None


def test_eos_and_length_end_samples_and_finished_samples_are_not_fed() -> None:
    table = np.full((len(VOCAB), len(VOCAB)), -30.0)
    table[1, 2] = 0.0  # a -> b
    table[2, EOS] = 0.0  # b -> <eos>
    table[3, 3] = 0.0  # c -> c -> ...
    prompt_row = np.full(len(VOCAB), -30.0)
    prompt_row[[1, 3]] = 0.0  # a or c, evenly
    settings = SamplingSettings(temperature=1.0, max_tokens=4, seed=11)
    model = ToyModel(table)
    samples = generate(prompt_row, range(6), settings, toy_decode, {EOS}, model.step)
    by_start = {s.tokens[0] for s in samples}
    assert by_start == {1, 3}, "both first tokens occur among six seeded samples"
    for s in samples:
        if s.tokens[0] == 1:
            assert (s.text, s.finish_reason) == ("ab", "eos")  # the EOS token is not kept
        else:
            assert (s.text, s.finish_reason) == ("cccc", "length")
    # a sample ending with eos is fed twice (a, b), one ending by length three times
    assert sum(len(slots) for slots in model.fed) == sum(
        2 if s.finish_reason == "eos" else 3 for s in samples
    )
    # each sample is the same drawn alone: its stream depends only on (seed, index)
    for s in samples:
        alone = generate(prompt_row, [s.index], settings, toy_decode, {EOS}, ToyModel(table).step)
        assert alone == [s]


# --- real models ----------------------------------------------------------------------------------

CHAT = [{"role": "user", "content": "Tell me a short story about a cat."}]


@pytest.fixture(scope="module")
def smollm2_samplers(packaged_models: dict[str, Path]):
    from storyflow.lm.backends.llama_cpp_sampler import LlamaCppSampler

    path = packaged_models["smollm2"]
    batched = LlamaCppSampler(path, n_ctx=256, n_seq=4, n_threads=1)
    single = LlamaCppSampler(path, n_ctx=256, n_seq=1, n_threads=1)
    return batched, single


@pytest.mark.slow
def test_smollm2_batched_samples_equal_one_at_a_time(smollm2_samplers) -> None:
    from storyflow.lm.prompts import generation_prompt

    batched, single = smollm2_samplers
    prompt = generation_prompt(batched.vocab.llm, CHAT)
    settings = SamplingSettings(temperature=0.9, top_p=0.95, max_tokens=16, stop=("\n",), seed=3)
    # K = 6 with n_seq = 4: a chunk of 4 then a chunk of 2; batches shrink as samples end
    together = batched.sample(prompt, 6, settings)
    alone = single.sample(prompt, 6, settings)
    # SmolLM2 (Q4_1): llama.cpp's logits of a token do not depend on the other sequences of
    # its batch (measured: max |diff| 0 for batches of 1..16 sequences), so the texts are equal
    assert together == alone
    assert [s.index for s in together] == list(range(6))
    assert len({s.text for s in together}) >= 5, "seeded samples differ from each other"
    assert batched.sample(prompt, 6, settings) == together  # the same seeds, the same texts
    assert batched.tokens_generated == 2 * sum(len(s.tokens) for s in together)
    other = batched.sample(prompt, 2, SamplingSettings(temperature=0.9, max_tokens=16, seed=4))
    assert [s.text for s in other] != [s.text for s in together[:2]]


@pytest.mark.slow
def test_smollm2_greedy_ends_and_context_check(smollm2_samplers) -> None:
    from storyflow.lm.prompts import generation_prompt

    batched, _ = smollm2_samplers
    question = [{"role": "user", "content": "What is 2 + 2?"}]
    prompt = generation_prompt(batched.vocab.llm, question)
    greedy = batched.sample(prompt, 3, SamplingSettings(temperature=0, max_tokens=24))
    assert greedy[0].text == "The answer to this classic math problem is 4."
    assert greedy[0].finish_reason == "eos"  # <|im_end|> ends the turn and is not kept
    assert greedy[1] == Sample(1, *(greedy[0].text, greedy[0].tokens, "eos"))
    assert greedy[2].text == greedy[0].text
    stopped = batched.sample(prompt, 1, SamplingSettings(temperature=0, stop=(" is",)))[0]
    assert (stopped.text, stopped.finish_reason) == (
        "The answer to this classic math problem",
        "stop",
    )
    short = batched.sample(prompt, 1, SamplingSettings(temperature=0, max_tokens=3))[0]
    assert (len(short.tokens), short.finish_reason) == (3, "length")
    assert greedy[0].text.startswith(short.text)
    with pytest.raises(StoryflowError, match="exceeds the context window of 256"):
        batched.sample(prompt, 1, SamplingSettings(max_tokens=250))


@pytest.mark.slow
def test_gemma_batched_sampling_equality_and_bound(packaged_models: dict[str, Path]) -> None:
    from scipy.special import softmax

    from storyflow.lm.backends.llama_cpp import VocabOnly
    from storyflow.lm.backends.llama_cpp_sampler import LlamaCppSampler
    from storyflow.lm.backends.llama_lowlevel import SequenceContext

    path = packaged_models["gemma"]
    prompt = "Once upon a time, a cat"
    settings = SamplingSettings(temperature=1.0, top_p=0.95, max_tokens=10, seed=2)
    # batches of at most 3 sequences: llama.cpp uses the same matrix kernel as for one token
    three = LlamaCppSampler(path, n_ctx=128, n_seq=3, n_threads=1).sample(prompt, 3, settings)
    one = LlamaCppSampler(path, n_ctx=128, n_seq=1, n_threads=1).sample(prompt, 3, settings)
    assert three == one
    # 4 or more: on x86 CPUs llama.cpp repacks Gemma's Q4_K weights and multiplies 4 rows at
    # a time with another kernel; a token's next-token distribution then moves (measured here:
    # total variation 0.036, top-20 log-probs up to 0.22 nats; docs/lm.md). Bound it.
    vocab = VocabOnly(path)
    ids = [vocab.start_token, *vocab.tokenize(prompt)]
    nxt = [vocab.tokenize(w)[0] for w in (" and", " was", " who", " sat")]
    ctx = SequenceContext(
        path, n_ctx_seq=64, n_seq=4, n_batch=64, n_ubatch=64, n_threads=1, n_gpu_layers=0
    )
    for pos, token in enumerate(ids):
        ctx.put(pos, token, pos, 0, False)
    ctx.decode(len(ids))
    for seq in range(1, 4):
        ctx.copy(0, seq)

    def next_rows(seqs: list[int]) -> np.ndarray:
        for i, seq in enumerate(seqs):
            ctx.put(i, nxt[seq], len(ids), seq, True)
        ctx.decode(len(seqs))
        rows = np.array(ctx.logits(len(seqs)), dtype=np.float64)
        for seq in seqs:
            ctx.remove(seq, len(ids))
        return rows

    together = next_rows([0, 1, 2, 3])
    alone = np.array([next_rows([seq])[0] for seq in range(4)])
    tv = 0.5 * np.abs(softmax(together, axis=1) - softmax(alone, axis=1)).sum(axis=1)
    print(f"Gemma, batch of 4 vs alone: total variation {tv.max():.4f}")
    assert tv.max() <= 0.06


@pytest.mark.slow
def test_transformers_sampler_follows_the_same_rule(packaged_models: dict[str, Path]) -> None:
    from storyflow.lm.backends.transformers import TransformersSampler
    from storyflow.lm.prompts import generation_prompt

    path = packaged_models["smollm2"]
    torch_sampler = TransformersSampler(path, n_threads=1)
    prompt = generation_prompt(
        torch_sampler.vocab.llm, [{"role": "user", "content": "What is 2 + 2?"}]
    )
    greedy = torch_sampler.sample(prompt, 1, SamplingSettings(temperature=0, max_tokens=16))[0]
    # the same text and end as llama.cpp (test above): float32 vs llama.cpp's quantized
    # activations moves log-probs by ~0.02 nats/token, not enough to change this greedy path
    assert (greedy.text, greedy.finish_reason) == (
        "The answer to this classic math problem is 4.",
        "eos",
    )
    settings = SamplingSettings(temperature=1.0, max_tokens=6, seed=9)
    first = torch_sampler.sample(prompt, 2, settings)
    assert torch_sampler.sample(prompt, 2, settings) == first
    assert first[0].text != first[1].text
    assert torch_sampler.tokens_generated == len(greedy.tokens) + 2 * sum(
        len(s.tokens) for s in first
    )


# --- transformers on the SmolLM2 checkpoint: K samples in one batch ----------------------------


@pytest.fixture(scope="module")
def checkpoint_sampler(smollm2_checkpoint: Path):
    from storyflow.lm.backends.transformers import TransformersSampler

    return TransformersSampler(smollm2_checkpoint, n_threads=2)


def draw(sampler, prompt: str, k: int, settings: SamplingSettings, n_seq: int) -> list[Sample]:
    """``sampler``'s samples 0..k-1 of ``prompt``, ``n_seq`` per batch."""
    sampler.n_seq = n_seq
    return sampler.sample(prompt, k, settings)


@pytest.mark.slow
def test_checkpoint_samples_drawn_together_repeat_and_match_one_at_a_time(
    checkpoint_sampler,
) -> None:
    from storyflow.lm.prompts import generation_prompt

    prompt = generation_prompt(checkpoint_sampler.vocab.llm, CHAT)
    settings = SamplingSettings(temperature=0.9, top_p=0.95, max_tokens=16, stop=("\n",), seed=3)
    # K = 6 with n_seq = 4: a batch of 4 then one of 2, the batches shrinking as samples end
    together = draw(checkpoint_sampler, prompt, 6, settings, n_seq=4)
    assert [s.index for s in together] == list(range(6))
    assert len({s.text for s in together}) >= 5, "seeded samples differ from each other"
    assert draw(checkpoint_sampler, prompt, 6, settings, n_seq=4) == together  # same seeds
    alone = draw(checkpoint_sampler, prompt, 6, settings, n_seq=1)
    # float32: a batch moves the logits by about 1e-6 (the matrix products' shapes), so a
    # sample leaves its one-at-a-time twin only at a draw that close to a token boundary
    equal = sum(a == b for a, b in zip(together, alone, strict=True))
    print(f"checkpoint samples, 4 per batch vs one at a time: {equal}/6 equal")
    assert equal >= 5


def token_table(*samples: list[Sample], position: int, least: int = 10) -> np.ndarray:
    """Counts of each token (or of each token pair up to ``position``) at ``position`` in each
    list of samples (rows), tokens seen fewer than ``least`` times in all pooled into one
    column, so that every expected count of a chi-square test is large enough."""
    from collections import Counter

    keys = [[tuple(s.tokens[: position + 1]) for s in group] for group in samples]
    total = Counter(k for group in keys for k in group)
    common = sorted(k for k, n in total.items() if n >= least)
    table = [[group.count(k) for k in common] for group in keys]
    rare = [sum(1 for k in group if total[k] < least) for group in keys]
    if any(rare):
        table = [[*row, n] for row, n in zip(table, rare, strict=True)]
    return np.array(table)


@pytest.mark.slow
def test_checkpoint_endings_drawn_together_follow_the_one_at_a_time_distribution(
    checkpoint_sampler,
) -> None:
    """Temperature 1, 320 endings of one prompt drawn 16 per batch against 320 drawn one at a
    time, with other seeds (independent draws): chi-square tests of the first token's
    frequencies and of the first two tokens' (the second drawn from a batched step's logits).
    The same tests must reject endings drawn at temperature 0.7, a difference they are built
    to see."""
    from scipy.stats import chi2_contingency

    prompt = "My favourite animal is the"
    hot = SamplingSettings(temperature=1.0, max_tokens=2, seed=11)
    together = draw(checkpoint_sampler, prompt, 320, hot, n_seq=16)
    alone = draw(checkpoint_sampler, prompt, 320, replace(hot, seed=12), n_seq=1)
    cooler = draw(checkpoint_sampler, prompt, 320, replace(hot, temperature=0.7), n_seq=16)
    assert all(len(s.tokens) == 2 for s in together + alone)
    for position in (0, 1):
        same = chi2_contingency(token_table(together, alone, position=position))
        shifted = chi2_contingency(token_table(together, cooler, position=position))
        print(
            f"token {position + 1}: batched vs one at a time p = {same.pvalue:.3f} "
            f"(dof {same.dof}); vs temperature 0.7 p = {shifted.pvalue:.2e}"
        )
        assert same.pvalue > 0.001
        assert shifted.pvalue < 0.001


# --- prompts for sampling and answers -----------------------------------------------------------


@pytest.mark.slow
def test_generation_prompt_chat_and_plain(packaged_models: dict[str, Path]) -> None:
    from storyflow.lm.backends.llama_cpp import VocabOnly
    from storyflow.lm.prompts import generation_prompt, prompt_tokens

    smol = VocabOnly(packaged_models["smollm2"]).llm
    messages = [
        {"role": "system", "content": "You answer briefly."},
        {"role": "user", "content": "Is the sky blue?"},
    ]
    text = generation_prompt(smol, messages)
    assert text == (
        "<|im_start|>system\nYou answer briefly.<|im_end|>\n"
        "<|im_start|>user\nIs the sky blue?<|im_end|>\n<|im_start|>assistant\n"
    )
    ids = prompt_tokens(smol, text)
    assert ids[0] == 1 and ids.count(1) == 3  # <|im_start|> parsed as one token, no BOS added
    plain = generation_prompt(smol, messages, mode="plain", cue="Answer:")
    assert plain == "You answer briefly.\n\nIs the sky blue?\nAnswer:"
    with pytest.raises(StoryflowError, match="cue is for plain prompts"):
        generation_prompt(smol, messages, cue="Answer:")
    with pytest.raises(StoryflowError, match="need a role"):
        generation_prompt(smol, [{"role": "assistant", "content": "hi"}])
    with pytest.raises(StoryflowError, match="prompt mode must be one of"):
        generation_prompt(smol, messages, mode="raw")
    gemma = VocabOnly(packaged_models["gemma"]).llm  # base model: no chat template, adds BOS
    with pytest.raises(StoryflowError, match="no chat template"):
        generation_prompt(gemma, messages, model_name="gemma")
    gemma_ids = prompt_tokens(gemma, "<bos>Hello")
    assert gemma_ids == prompt_tokens(gemma, "Hello") and gemma_ids[0] == gemma.token_bos()
    assert gemma_ids.count(gemma.token_bos()) == 1  # not doubled when the text writes it
