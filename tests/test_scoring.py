"""NLL engine: pass planning, truncation policy, and equivalence with from-scratch scoring.

The planning tests use a toy language model whose log-probabilities depend on the whole context,
so any mistake in which sentences a term sees changes the number. The real-model tests score real
HIPPOCORPUS sentences with the packaged models and compare every (sentence, h) term with a single
from-scratch forward pass over exactly that term's prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import log_softmax

from storyflow.errors import StoryflowError
from storyflow.history import history_labels
from storyflow.scoring import (
    LlamaCppScorer,
    NllSettings,
    PassCounter,
    StoryTokens,
    VocabOnly,
    _requested_starts,
    gather_shards,
    score_corpus,
    score_terms,
    select_shard,
    story_rows,
    tokenize_story,
)


class ToyScorer:
    """A deterministic 'language model': ln p(token | context) depends on the entire context."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    @staticmethod
    def token_logprob(context: Sequence[int], token: int) -> float:
        return -(((sum(context) * 31 + token * 7 + len(context) * 13) % 97) / 10.0 + 0.01)

    def logprobs(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        self.calls.append((tuple(prefix), tuple(continuation)))
        seq = list(prefix)
        out = []
        for tok in continuation:
            out.append(self.token_logprob(seq, tok))
            seq.append(tok)
        return np.array(out)

    def from_scratch(self, prefix: list[int], context: list[list[int]], target: list[int]) -> float:
        seq = list(prefix) + [t for s in context for t in s]
        return -float(self.logprobs(seq, target).mean())


SENTENCES = [[11, 12], [13, 14, 15], [16], [17, 18, 19, 20], [21, 22], [23, 24, 25]]
PREFIX = [1, 5, 6]


def test_requested_starts_cover_every_history_and_full() -> None:
    needed = _requested_starts(4, 2)
    # full history and every history that reaches the start share context start 0
    assert needed[0] == {0, 1, 2, 3}
    assert needed[1] == {1, 2, 3}  # s1 with h=0, s2 with h=1, s3 with h=2
    assert needed[2] == {2, 3}
    assert needed[3] == {3}


def test_one_pass_per_context_start_and_exact_terms() -> None:
    toy = ToyScorer()
    counter = PassCounter()
    terms = score_terms(toy, PREFIX, SENTENCES, max_history=2, capacity=10_000, counter=counter)
    # one pass per context start: c = 0 (the whole story) and c = 1..5
    assert counter.passes == len(SENTENCES)
    assert [len(cont) for _, cont in toy.calls] == [15, 8, 7, 9, 5, 3]
    # tokens: prefix once + the lower bound (each target once per distinct context)
    assert counter.tokens == len(PREFIX) + sum(len(cont) for _, cont in toy.calls)
    for (c, i), result in terms.items():
        expected = ToyScorer().from_scratch(PREFIX, SENTENCES[c:i], SENTENCES[i])
        assert result.nll == pytest.approx(expected, abs=1e-12)
        assert result.context_start == c
        assert result.n_tokens == len(SENTENCES[i])


def test_story_rows_map_history_labels_to_contexts() -> None:
    toy = ToyScorer()
    terms = score_terms(toy, PREFIX, SENTENCES, max_history=2, capacity=10_000)
    story = StoryTokens("s1", SENTENCES, None)
    rows = pd.DataFrame(
        story_rows(story, terms, "toy", "context", 2),
        columns=["story_id", "sentence_idx", "model", "formulation", "history", "n_history",
                 "n_tokens", "nll", "truncated"],
    )  # fmt: skip
    assert len(rows) == len(SENTENCES) * len(history_labels(2))
    row = rows.set_index(["sentence_idx", "history"])
    # sentence 4 with h = 2 sees sentences 2 and 3; full history sees 0..3
    assert row.loc[(4, "2"), "n_history"] == 2
    assert row.loc[(4, "2"), "nll"] == pytest.approx(
        ToyScorer().from_scratch(PREFIX, SENTENCES[2:4], SENTENCES[4])
    )
    assert row.loc[(4, "full"), "n_history"] == 4
    # sentence 1 with h = 2 has only one preceding sentence: same term as full history
    assert row.loc[(1, "2"), "n_history"] == 1
    assert row.loc[(1, "2"), "nll"] == row.loc[(1, "full"), "nll"]
    assert not rows["truncated"].any()


def test_overlong_story_truncates_history_from_the_left() -> None:
    toy = ToyScorer()
    capacity = len(PREFIX) + 9  # prefix + 9 tokens: the whole story (15 tokens) does not fit
    terms = score_terms(toy, PREFIX, SENTENCES, max_history=3, capacity=capacity)
    for (requested, i), result in terms.items():
        used = result.context_start
        length = len(PREFIX) + sum(len(s) for s in SENTENCES[used : i + 1])
        assert length <= capacity
        if used > requested:  # truncated: one more sentence on the left would not fit
            assert length + len(SENTENCES[used - 1]) > capacity
        expected = ToyScorer().from_scratch(PREFIX, SENTENCES[used:i], SENTENCES[i])
        assert result.nll == pytest.approx(expected, abs=1e-12)
    # sentence 5, full history: s3..s5 is 4 + 2 + 3 = 9 tokens, exactly the room left
    assert terms[(0, 5)].context_start == 3
    assert terms[(0, 3)].context_start == 1  # s1..s2 + s3 = 8 tokens fit, s0 does not


def test_sentence_longer_than_the_window_is_a_clear_error() -> None:
    with pytest.raises(StoryflowError, match="sentence 3 has 4 tokens"):
        score_terms(ToyScorer(), PREFIX, SENTENCES, max_history=1, capacity=len(PREFIX) + 3)


def test_shards_partition_the_stories() -> None:
    stories = pd.DataFrame({"story_id": [f"s{k:02d}" for k in range(10)][::-1]})
    shards = [select_shard(stories, k, 3) for k in range(3)]
    ids = [set(s["story_id"]) for s in shards]
    assert set().union(*ids) == set(stories["story_id"])
    assert sum(len(s) for s in ids) == 10
    assert list(shards[0]["story_id"]) == ["s00", "s03", "s06", "s09"]


def test_gather_rejects_a_story_scored_twice(tmp_path: Path) -> None:
    row = dict(story_id="a", sentence_idx=0, model="m", formulation="context", history="0")
    row |= dict(n_history=0, n_tokens=3, nll=1.0, truncated=False)
    for name in ("x", "y"):
        pd.DataFrame([row]).to_parquet(tmp_path / f"{name}.parquet")
    with pytest.raises(ValueError, match="more than one shard"):
        gather_shards([tmp_path / "x.parquet", tmp_path / "y.parquet"])


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoryflowError, match="does not exist"):
        VocabOnly(tmp_path / "absent.gguf")


# --- real models ---------------------------------------------------------------------------------


def _from_scratch_nll(scorer: LlamaCppScorer, tokens: list[int], n_target: int) -> float:
    """Mean NLL of the last ``n_target`` tokens from one fresh forward pass over ``tokens``."""
    llm = scorer.llm
    llm.reset()
    scorer._stem = None  # the engine's cached prefix is gone
    llm.eval(tokens)
    logits = np.asarray(llm.scores[: len(tokens) - 1], dtype=np.float64)
    logprobs = log_softmax(logits, axis=1)[np.arange(len(tokens) - 1), tokens[1:]]
    return -float(logprobs[-n_target:].mean())


def _short_stories(hippocorpus: pd.DataFrame, n: int) -> pd.DataFrame:
    return hippocorpus.assign(length=hippocorpus["story"].str.len()).nsmallest(n, "length")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "tolerance"),
    [
        # SmolLM2 through llama.cpp: a pass over a window gives bit-identical log-probs to
        # separate passes, so the 1e-3 nats/token bound holds with a wide margin
        # (measured: max difference below 1e-6).
        ("smollm2", 1e-3),
        # Gemma 3 through llama.cpp: logits at the last 1-3 positions of a batch move with the
        # batch's length. In the reference every target ends its batch; in the engine most do
        # not, so those terms differ by that noise: measured up to 0.0133 nats/token on one
        # sentence (0.014 seen elsewhere), 2.2e-3 on average, while terms whose target also ends
        # the engine's pass agree to 1e-8. Bound: 0.02 per term, 5e-3 on average, and at least a
        # third of the terms identical to 1e-6 (the same computation, not an approximation).
        ("gemma", 2e-2),
    ],
)
def test_engine_equals_from_scratch_on_real_sentences(
    model: str, tolerance: float, packaged_models: dict[str, Path], hippocorpus: pd.DataFrame, nlp
) -> None:
    from storyflow.sentences import split_sentences

    path = packaged_models[model]
    stories = _short_stories(hippocorpus, 2 if model == "smollm2" else 1)
    frame = pd.DataFrame({"story_id": stories["AssignmentId"], "text": stories["story"]})
    sentences = split_sentences(frame, nlp)
    vocab = VocabOnly(path)
    scorer = LlamaCppScorer(path, n_ctx=1024, n_threads=2)
    diffs = []
    for story in stories.itertuples():
        # the first 6 sentences keep the from-scratch reference (one pass per term) quick
        texts = list(sentences.loc[sentences["story_id"] == story.AssignmentId, "text"])[:6]
        tokens = tokenize_story(vocab, story.AssignmentId, texts, story.summary)
        for formulation in ("topic", "context"):
            prefix = tokens.prefix(formulation, vocab.start_token)
            terms = score_terms(scorer, prefix, tokens.sentences, max_history=2, capacity=1024)
            assert len(terms) == sum(len(t) for t in _requested_starts(len(texts), 2).values())
            for (c, i), result in terms.items():
                context = [t for s in tokens.sentences[c:i] for t in s]
                sequence = prefix + context + tokens.sentences[i]
                expected = _from_scratch_nll(scorer, sequence, len(tokens.sentences[i]))
                diffs.append(abs(result.nll - expected))
    diffs_array = np.array(diffs)
    assert diffs_array.max() <= tolerance
    assert diffs_array.mean() <= min(tolerance, 5e-3)
    assert (diffs_array < 1e-6).mean() >= (1.0 if model == "smollm2" else 1 / 3)


@pytest.mark.slow
def test_start_tokens_follow_the_models_bos_convention(packaged_models: dict[str, Path]) -> None:
    # Gemma adds <bos> (id 2); SmolLM2 adds no BOS, so its <|endoftext|> (id 0) starts sequences.
    gemma = VocabOnly(packaged_models["gemma"])
    smol = VocabOnly(packaged_models["smollm2"])
    assert gemma.start_token == 2
    assert gemma.llm.detokenize([2], special=True) == b"<bos>"
    assert smol.start_token == 0
    assert smol.llm.detokenize([0], special=True) == b"<|endoftext|>"


@pytest.mark.slow
def test_score_corpus_long_table_with_truncation(
    packaged_models: dict[str, Path], hippocorpus: pd.DataFrame, nlp
) -> None:
    from storyflow.sentences import split_sentences

    stories = _short_stories(hippocorpus, 2)
    frame = pd.DataFrame(
        {
            "story_id": stories["AssignmentId"],
            "text": stories["story"],
            # the second story has no topic: context rows only
            "topic": [stories["summary"].iloc[0], None],
        }
    )
    sentences = split_sentences(frame, nlp)
    settings = NllSettings(max_history=2, max_context_tokens=128, n_threads=2)
    table = score_corpus("smollm2", packaged_models["smollm2"], frame, sentences, settings)
    n_first, n_second = (int((sentences["story_id"] == s).sum()) for s in frame["story_id"])
    labels = len(history_labels(2))
    assert len(table) == labels * (2 * n_first + n_second)
    second = table[table["story_id"] == frame["story_id"].iloc[1]]
    assert set(second["formulation"]) == {"context"}
    assert (table["nll"] > 0).all() and (table["n_tokens"] > 0).all()
    # a 128-token window cannot hold whole stories: full history is truncated from the left
    full = table[table["history"] == "full"]
    assert full["truncated"].any()
    truncated = full[full["truncated"]]
    assert (truncated["n_history"] < truncated["sentence_idx"]).all()
    assert not table.loc[table["history"] == "0", "truncated"].any()


def test_batch_size_defaults_per_device() -> None:
    base = {"max_history": 9, "formulations": ["topic"], "max_context_tokens": 2048}
    cpu = NllSettings.from_config({**base, "n_gpu_layers": 0, "n_batch": None})
    gpu = NllSettings.from_config({**base, "n_gpu_layers": -1, "n_batch": None})
    assert (cpu.n_batch, gpu.n_batch) == (512, 2048)
    chosen = NllSettings.from_config({**base, "n_gpu_layers": -1, "n_batch": 256})
    assert chosen.n_batch == 256
