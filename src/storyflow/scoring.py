"""Per-sentence negative log-likelihoods under a causal language model, for every history size.

Terms (method.md §1): for sentence s_i of a story, history size h and formulation f,

- f = ``"topic"``: the sequence is start token + topic + "\\n\\n" + s_{i-h} .. s_{i-1} + s_i;
- f = ``"context"``: the sequence is start token + s_{i-h} .. s_{i-1} + s_i;

(instruct models with ``prompt: chat``: the model's chat template replaces start token + topic +
"\\n\\n", see ``storyflow.prompts``) and the score is the mean over s_i's own tokens of
−log p(token | everything before it), in nats/token. h = 0 gives NLL_T (topic) and NLL_∅
(context); h = ``"full"`` uses all preceding sentences. The start token is the model's BOS
token, or its end-of-text token when it has none.

How the terms are computed (each exactly, not approximated):

* Every sentence is tokenized once, with its leading space, and token ids are concatenated, so a
  target's tokens are identical in every condition.
* A term depends only on where its context starts: (c, i) = sentences c..i-1 then target i. All
  terms that share a context start c are read from **one** forward pass over prefix + s_c .. s_last:
  in that pass the tokens of s_{c+k} are conditioned on exactly k preceding sentences. The pass for
  c = 0 runs over the whole story and gives the full-history terms as well as every term whose
  history reaches the start of the story.
* The prefix (start token, topic) is evaluated once per story and formulation and its cached state
  is reused by every pass of that story.

Context-window policy: the window is sized to the longest sequence needed, at most
``max_context_tokens`` (and the model's training context). When a pass does not fit, the targets
that fit are read from it and each remaining target is scored with its history truncated from the
left (whole sentences dropped, oldest first) until prefix + history + target fits; the row records
``n_history`` (sentences actually seen) and ``truncated = True``.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd
from tqdm import tqdm

from storyflow.errors import StoryflowError
from storyflow.history import FULL, history_labels
from storyflow.prompts import ChatPrompt

if TYPE_CHECKING:
    from storyflow.backends.batched import BatchedLlamaCppScorer

log = logging.getLogger(__name__)

FORMULATIONS = ("topic", "context")
TOPIC_SEPARATOR = "\n\n"


NLL_DTYPES = {
    "story_id": "object",
    "sentence_idx": "int64",
    "model": "object",
    "formulation": "object",
    "history": "object",
    "n_history": "int64",
    "n_tokens": "int64",
    "nll": "float64",
    "truncated": "bool",
}


@dataclass(frozen=True)
class NllSettings:
    """Settings of one NLL extraction (the config's ``nll:`` block plus the rule's threads)."""

    max_history: int = 9
    formulations: tuple[str, ...] = FORMULATIONS
    max_context_tokens: int = 2048
    n_gpu_layers: int = 0
    n_batch: int = 512
    n_seq: int = 1
    n_threads: int = 1

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], threads: int = 1) -> NllSettings:
        """Build from the validated config block (defaults already filled by the schema)."""
        return cls(
            max_history=int(cfg["max_history"]),
            formulations=tuple(cfg["formulations"]),
            max_context_tokens=int(cfg["max_context_tokens"]),
            n_gpu_layers=int(cfg["n_gpu_layers"]),
            n_batch=default_n_batch(int(cfg["n_gpu_layers"]), cfg.get("n_batch")),
            n_seq=default_n_seq(int(cfg["n_gpu_layers"]), cfg.get("n_seq")),
            n_threads=int(threads),
        )


def default_n_batch(n_gpu_layers: int, n_batch: int | None = None) -> int:
    """``n_batch`` when set, else the default per device: 512 on CPU, 2048 with GPU offload."""
    if n_batch is not None:
        return int(n_batch)
    return 2048 if n_gpu_layers != 0 else 512


def default_n_seq(n_gpu_layers: int, n_seq: int | None = None) -> int:
    """Passes per llama.cpp batch: ``n_seq`` when set, else 1 on CPU and 16 with GPU offload.

    On a CPU one pass already fills the cores (the engine runs at the raw forward rate,
    docs/engine.md); on a GPU one pass of ~130 tokens leaves most of it idle.
    """
    if n_seq is not None:
        return int(n_seq)
    return 16 if n_gpu_layers != 0 else 1


class Scorer(Protocol):
    """A causal LM that scores a continuation after a (cached) prefix."""

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text``, without any special token added."""
        ...

    @property
    def start_token(self) -> int:
        """The token every sequence starts with (BOS, or end-of-text when the model has no BOS)."""
        ...

    def logprobs(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        """ln p(continuation[t] | prefix + continuation[:t]) for each t (natural log, float64)."""
        ...


def _token_logprobs(
    logits: np.ndarray, targets: Sequence[int], chunk: int = 16, workers: int = 1
) -> np.ndarray:
    """Log-softmax of each logits row at its target id (natural log, float64).

    Rows are processed in chunks (``chunk`` × vocabulary float32 scratch per worker) to bound
    memory, by ``workers`` threads (numpy releases the GIL in these loops; the results do not
    depend on the number of workers). The exponentials are taken in place and summed in float32
    (numpy's pairwise summation: relative error about 1e-7, i.e. 1e-7 nats): over a 262k
    vocabulary this halves the time of a float64 sum, and on a GPU this log-softmax, not the
    forward pass, is the engine's main cost (docs/engine.md).
    """
    out = np.empty(len(targets), dtype=np.float64)
    target_ids = np.asarray(targets)

    def rows_from(start: int) -> None:
        rows = np.asarray(logits[start : start + chunk], dtype=np.float32)
        peak = rows.max(axis=1, keepdims=True)
        shifted = rows - peak
        np.exp(shifted, out=shifted)
        lse = np.log(shifted.sum(axis=1).astype(np.float64)) + peak[:, 0]
        picked = rows[np.arange(len(rows)), target_ids[start : start + chunk]]
        out[start : start + len(rows)] = picked - lse

    starts = range(0, len(targets), chunk)
    if workers > 1 and len(starts) > 1:
        list(_pool(workers).map(rows_from, starts))
    else:
        for start in starts:
            rows_from(start)
    return out


@cache
def _pool(workers: int) -> ThreadPoolExecutor:
    """A thread pool for the log-softmax, one per worker count, kept for the process."""
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="logsoftmax")


class LlamaCppScorer:
    """llama-cpp-python backend: log-probs computed from ``logits_all`` scores.

    ``create_completion(echo=True, logprobs=...)`` is not used: it shifts log-probs for models
    without a BOS token. The prefix's KV cache is kept between calls with the same prefix.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int,
        n_threads: int = 1,
        n_gpu_layers: int = 0,
        n_batch: int = 512,
    ) -> None:
        from llama_cpp import Llama

        path = Path(model_path)
        if not path.is_file():
            raise StoryflowError(
                f"model file {path} does not exist (run the materialize_model rule)"
            )
        batch = min(n_batch, n_ctx)
        self.llm = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_batch=batch,
            n_ubatch=batch,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            n_gpu_layers=n_gpu_layers,
            logits_all=True,
            verbose=False,
        )
        self.n_ctx = n_ctx
        self.logits_rows = n_ctx  # rows of the logits buffer (logits_all: the window)
        self.workers = n_threads  # threads of the log-softmax (between llama.cpp calls)
        self.tokens_evaluated = 0  # tokens run through the model (all calls)
        self._stem: list[int] | None = None

    @staticmethod
    def vocab_only(model_path: str | Path) -> VocabOnly:
        """A tokenizer-only view of the model (loads no weights)."""
        return VocabOnly(model_path)

    def tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    @property
    def start_token(self) -> int:
        return start_token_of(self.llm)

    def logprobs(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        """Log-probs of ``continuation`` after ``prefix``, reusing the prefix's cached state.

        The cache holds the prefix *without its last token*; each call evaluates that last token
        together with the continuation, so every logit read here comes from this call's batch (as
        in a from-scratch pass; llama.cpp's logits can move slightly with the batch they are in).
        """
        if len(prefix) + len(continuation) > self.n_ctx:
            raise ValueError("sequence longer than the context window")
        stem = list(prefix[:-1])
        if self._stem != stem:
            self.llm.reset()
            if stem:
                self.llm.eval(stem)
                self.tokens_evaluated += len(stem)
            self._stem = stem
        self.llm.n_tokens = len(stem)  # drop the previous pass, keep the stem's KV cache
        self.llm.eval([prefix[-1], *continuation])
        self.tokens_evaluated += 1 + len(continuation)
        # logits at position p predict the token at p + 1: the prefix's last token is at len(stem)
        return _token_logprobs(
            self.llm.scores[len(stem) : len(stem) + len(continuation)],
            continuation,
            workers=self.workers,
        )


END_OF_TEXT = "<|endoftext|>"


def start_token_of(llm: Any) -> int:
    """The token every scored sequence starts with.

    The model's BOS token when its tokenizer adds one (GGUF ``tokenizer.ggml.add_bos_token``, true
    when absent and a BOS id exists). Otherwise the model was trained without BOS (GPT-2, SmolLM,
    Qwen style) and its end-of-text token ``<|endoftext|>`` separates documents, so that token is
    used; failing that, the EOS token. (SmolLM2-Instruct's GGUF names ``<|im_start|>`` as BOS but
    does not add it: it gets ``<|endoftext|>``, id 0.)
    """
    bos = int(llm.token_bos())
    adds_bos = str(llm.metadata.get("tokenizer.ggml.add_bos_token", "true")).lower() == "true"
    if bos >= 0 and adds_bos:
        return bos
    ids = llm.tokenize(END_OF_TEXT.encode(), add_bos=False, special=True)
    if len(ids) == 1:
        return int(ids[0])
    return int(llm.token_eos())


def training_context(llm: Any) -> int:
    """The model's training context length in tokens (GGUF ``<arch>.context_length``)."""
    meta = llm.metadata
    value = meta.get(f"{meta.get('general.architecture', '')}.context_length")
    return int(value) if value else 2**31 - 1


class VocabOnly:
    """Tokenizer of a GGUF model without its weights (used to size the context window)."""

    def __init__(self, model_path: str | Path) -> None:
        from llama_cpp import Llama

        path = Path(model_path)
        if not path.is_file():
            raise StoryflowError(
                f"model file {path} does not exist (run the materialize_model rule)"
            )
        self.llm = Llama(model_path=str(path), vocab_only=True, verbose=False)
        self.n_ctx_train = training_context(self.llm)

    def tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    @property
    def start_token(self) -> int:
        return start_token_of(self.llm)


@dataclass
class StoryTokens:
    """One story, tokenized: its sentences (each with its leading space) and topic prefix."""

    story_id: str
    sentences: list[list[int]]
    topic: list[int] | None  # tokens of topic + "\n\n", None when the story has no topic
    # chat-template prefixes per formulation (storyflow.prompts), replacing start token + topic
    chat: dict[str, list[int]] | None = None

    def formulations(self, requested: Sequence[str]) -> list[str]:
        """The requested formulations this story has (no topic: context only)."""
        return [f for f in requested if f != "topic" or self.topic is not None]

    def prefix(self, formulation: str, start: int) -> list[int]:
        if self.chat is not None:
            return list(self.chat[formulation])
        if formulation == "topic":
            assert self.topic is not None
            return [start, *self.topic]
        return [start]


def tokenize_story(
    tokenizer: Any,
    story_id: str,
    sentences: Sequence[str],
    topic: str | None,
    chat: ChatPrompt | None = None,
) -> StoryTokens:
    """Tokenize each sentence once as ``" " + sentence``; the topic as ``topic + "\\n\\n"``.

    With ``chat``, the prefixes come from the model's chat template instead (storyflow.prompts);
    the sentences are tokenized the same way.
    """
    sentence_ids = [tokenizer.tokenize(" " + text) for text in sentences]
    for idx, ids in enumerate(sentence_ids):
        if not ids:
            raise StoryflowError(
                f"story {story_id}, sentence {idx}: no tokens ({sentences[idx]!r})"
            )
    topic_ids = tokenizer.tokenize(topic.strip() + TOPIC_SEPARATOR) if topic else None
    prefixes = None
    if chat is not None:
        prefixes = {"context": chat.prefix("context", None)}
        if topic:
            prefixes["topic"] = chat.prefix("topic", topic)
    return StoryTokens(story_id, sentence_ids, topic_ids, prefixes)


@dataclass
class TermResult:
    """One scored (context start, target) term."""

    nll: float  # mean −ln p over the target's tokens, nats/token
    n_tokens: int  # tokens in the target sentence
    context_start: int  # first sentence actually in the context (> requested when truncated)


@dataclass
class PassCounter:
    """Forward passes, and the tokens they must cover at the least.

    ``tokens`` counts each prefix once per story and formulation plus each pass's continuation:
    every target sentence once per distinct context it is scored in (the lower bound of work).
    """

    passes: int = 0
    tokens: int = 0


def _requested_starts(n: int, max_history: int) -> dict[int, set[int]]:
    """Context start c → targets i needed, for h = 0..H and full history."""
    needed: dict[int, set[int]] = defaultdict(set)
    for i in range(n):
        needed[0].add(i)  # full history
        for h in range(min(i, max_history) + 1):
            needed[i - h].add(i)
    return needed


@dataclass(frozen=True)
class Pass:
    """One forward pass of a story: prefix + sentences ``start`` .. ``stop - 1``.

    ``targets`` maps each target sentence read from this pass to the requested context starts it
    answers (more than one when truncation made several requests see the same context).
    """

    start: int
    stop: int
    targets: dict[int, list[int]]


def plan_passes(
    prefix_len: int, lengths: Sequence[int], max_history: int, capacity: int
) -> list[Pass]:
    """The passes that score every (requested context start, target) term of one story.

    One pass per context start c over prefix + s_c..s_last (see the module docstring), cut where
    ``capacity`` tokens are reached; a target beyond the cut gets its history truncated from the
    left (whole sentences, oldest first) and is read from the pass of its new start. The plan
    depends only on the token counts, so it is made before any pass is evaluated.
    """
    for i, length in enumerate(lengths):
        if prefix_len + length > capacity:
            raise StoryflowError(
                f"sentence {i} has {length} tokens: with the {prefix_len}-token prefix it "
                f"does not fit the {capacity}-token context; raise nll.max_context_tokens"
            )
    # pending[c_used][i] = list of requested starts served by this (c_used, i) term
    pending: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for c, targets in _requested_starts(len(lengths), max_history).items():
        for i in targets:
            pending[c][i].append(c)
    passes = []
    while pending:
        c = min(pending)
        targets = pending.pop(c)
        last = max(targets)
        budget = capacity - prefix_len
        stop = c  # sentences c..stop-1 fit
        while stop <= last and budget >= lengths[stop]:
            budget -= lengths[stop]
            stop += 1
        fitting = {}
        for i, requested in sorted(targets.items()):
            if i < stop:
                fitting[i] = requested
                continue
            new_start = c + 1  # drop whole sentences from the left until the term fits
            while prefix_len + sum(lengths[new_start : i + 1]) > capacity:
                new_start += 1
            pending[new_start][i].extend(requested)
        passes.append(Pass(c, stop, fitting))
    return passes


def pass_tokens(sentences: Sequence[Sequence[int]], step: Pass) -> list[int]:
    """The continuation a pass evaluates after the prefix: the tokens of s_start .. s_stop-1."""
    return [tok for s in sentences[step.start : step.stop] for tok in s]


def read_terms(
    lengths: Sequence[int], step: Pass, logprobs: np.ndarray
) -> dict[tuple[int, int], TermResult]:
    """The terms of one pass from its log-probs (one per continuation token, natural log).

    ``lengths``: tokens per sentence of the story.
    """
    offsets = np.cumsum([0, *lengths[step.start : step.stop]])
    results = {}
    for i, requested in step.targets.items():
        k = i - step.start
        nll = -float(logprobs[offsets[k] : offsets[k + 1]].mean())
        for r in requested:
            results[(r, i)] = TermResult(nll, lengths[i], step.start)
    return results


def score_requests(
    scorer: Scorer, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
) -> list[np.ndarray]:
    """Log-probs of each (prefix, continuation) request, in order.

    A scorer with ``logprobs_batch`` (the batched llama.cpp scorer) gets all requests at once
    and may evaluate several in one batch; otherwise they are scored one after another.
    """
    batch = getattr(scorer, "logprobs_batch", None)
    if batch is not None:
        return list(batch(requests))
    return [scorer.logprobs(prefix, continuation) for prefix, continuation in requests]


def score_terms(
    scorer: Scorer,
    prefix: list[int],
    sentences: list[list[int]],
    max_history: int,
    capacity: int,
    counter: PassCounter | None = None,
) -> dict[tuple[int, int], TermResult]:
    """Score every (requested context start c, target i) term of one story and formulation.

    One forward pass per context start c over prefix + s_c..s_last (see the module docstring);
    terms that do not fit ``capacity`` tokens get their history truncated from the left.
    """
    return score_stories(scorer, [(prefix, sentences)], max_history, capacity, counter)[0]


def score_stories(
    scorer: Scorer,
    jobs: Sequence[tuple[list[int], list[list[int]]]],
    max_history: int,
    capacity: int,
    counter: PassCounter | None = None,
    names: Sequence[str] | None = None,
) -> list[dict[tuple[int, int], TermResult]]:
    """``score_terms`` for several (prefix, sentences) jobs, all their passes sent at once.

    All passes of all jobs go to the scorer in one request list (job by job, passes in order), so
    a batched scorer can put passes of different stories and formulations in one batch.
    ``names`` (one per job) label the error raised when a job's sentence cannot fit.
    """
    counter = counter if counter is not None else PassCounter()
    lengths = [[len(s) for s in sentences] for _, sentences in jobs]
    plans = []
    for j, (prefix, _) in enumerate(jobs):
        try:
            plans.append(plan_passes(len(prefix), lengths[j], max_history, capacity))
        except StoryflowError as err:
            raise StoryflowError(f"{names[j]}: {err}" if names else str(err)) from err
    requests = []
    for (prefix, sentences), plan in zip(jobs, plans, strict=True):
        counter.tokens += len(prefix)
        for step in plan:
            continuation = pass_tokens(sentences, step)
            requests.append((prefix, continuation))
            counter.passes += 1
            counter.tokens += len(continuation)
    logprobs = iter(score_requests(scorer, requests))
    results = []
    for story_lengths, plan in zip(lengths, plans, strict=True):
        terms: dict[tuple[int, int], TermResult] = {}
        for step in plan:
            terms.update(read_terms(story_lengths, step, next(logprobs)))
        results.append(terms)
    return results


def score_story(
    scorer: Scorer,
    story: StoryTokens,
    formulations: Sequence[str],
    start: int,
    max_history: int,
    capacity: int,
    counter: PassCounter | None = None,
) -> dict[str, dict[tuple[int, int], TermResult]]:
    """Terms per formulation of one story (those it has), all its passes sent at once.

    A batched scorer fills its batches with the passes of both formulations, and a story's NLLs
    do not depend on the other stories of the run.
    """
    present = story.formulations(formulations)
    terms = score_stories(
        scorer,
        [(story.prefix(formulation, start), story.sentences) for formulation in present],
        max_history,
        capacity,
        counter,
        names=[f"story {story.story_id} ({formulation})" for formulation in present],
    )
    return dict(zip(present, terms, strict=True))


def llama_cpp_scorer(
    model_path: str | Path, n_ctx: int, settings: NllSettings
) -> LlamaCppScorer | BatchedLlamaCppScorer:
    """The llama.cpp scorer for ``settings``: batched when ``n_seq`` > 1, else pass by pass."""
    if settings.n_seq > 1:
        from storyflow.backends.batched import BatchedLlamaCppScorer

        return BatchedLlamaCppScorer(
            model_path,
            n_ctx=n_ctx,
            n_seq=settings.n_seq,
            n_batch=settings.n_batch,
            n_threads=settings.n_threads,
            n_gpu_layers=settings.n_gpu_layers,
        )
    return LlamaCppScorer(
        model_path,
        n_ctx=n_ctx,
        n_threads=settings.n_threads,
        n_gpu_layers=settings.n_gpu_layers,
        n_batch=settings.n_batch,
    )


def story_rows(
    story: StoryTokens,
    terms: Mapping[tuple[int, int], TermResult],
    model: str,
    formulation: str,
    max_history: int,
) -> list[tuple[Any, ...]]:
    """Long-format rows (columns of ``NLL_DTYPES``) of one story and formulation."""
    rows = []
    for i in range(len(story.sentences)):
        for label in history_labels(max_history):
            requested = 0 if label == FULL else max(0, i - int(label))
            term = terms[(requested, i)]
            rows.append(
                (
                    story.story_id,
                    i,
                    model,
                    formulation,
                    label,
                    i - term.context_start,
                    term.n_tokens,
                    term.nll,
                    term.context_start > requested,
                )
            )
    return rows


def context_size(stories: Sequence[StoryTokens], formulations: Sequence[str], start: int) -> int:
    """Tokens of the longest full-history sequence (prefix + whole story) over all stories."""
    longest = 1
    for story in stories:
        body = sum(len(s) for s in story.sentences)
        for formulation in story.formulations(formulations):
            longest = max(longest, len(story.prefix(formulation, start)) + body)
    return longest


def select_shard(stories: pd.DataFrame, shard: int, n_shards: int) -> pd.DataFrame:
    """Shard ``shard`` (0-based) of ``n_shards``: every n-th story in story_id order.

    Round-robin over sorted ids spreads long and short stories evenly and is deterministic.
    """
    if not 0 <= shard < n_shards:
        raise ValueError(f"shard {shard} outside 0..{n_shards - 1}")
    ordered = stories.sort_values("story_id").reset_index(drop=True)
    return ordered.iloc[shard::n_shards].reset_index(drop=True)


def gather_shards(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Concatenate shard tables; a story scored in two shards is a bug and raises ValueError."""
    table = pd.concat([pd.read_parquet(path) for path in paths], ignore_index=True)
    keys = ["story_id", "sentence_idx", "model", "formulation", "history"]
    duplicated = table.duplicated(keys)
    if duplicated.any():
        raise ValueError(f"{int(duplicated.sum())} NLL rows appear in more than one shard")
    return table.sort_values(
        ["story_id", "formulation", "sentence_idx"], kind="stable"
    ).reset_index(drop=True)


def score_corpus(
    model_name: str,
    model_path: str | Path,
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    settings: NllSettings,
    prompt: str = "plain",
    backend: str = "llama.cpp",
    dtype: str = "float32",
) -> pd.DataFrame:
    """NLL table (columns of ``NLL_DTYPES``) of every story, sentence, formulation and history size.

    ``stories`` needs ``story_id``, ``topic`` (None when missing); ``sentences`` needs
    ``story_id``, ``sentence_idx``, ``text``. Stories without a topic get context rows only.
    ``prompt``: ``plain`` (start token, topic, "\\n\\n") or ``chat`` (the model's chat template,
    storyflow.prompts). ``backend``: ``llama.cpp`` or ``transformers`` (the same GGUF,
    dequantized; ``dtype`` float32 or bfloat16; on the GPU when ``settings.n_gpu_layers`` != 0).
    """
    if stories.empty:
        log.info("model %s: no stories in this shard", model_name)
        return pd.DataFrame(
            {column: pd.Series(dtype=dtype) for column, dtype in NLL_DTYPES.items()}
        )
    vocab = VocabOnly(model_path)
    start = vocab.start_token
    if prompt not in ("plain", "chat"):
        raise ValueError(f"prompt must be plain or chat, not {prompt!r}")
    chat = ChatPrompt(vocab.llm, model_name) if prompt == "chat" else None
    by_story = sentences.sort_values(["story_id", "sentence_idx"]).groupby("story_id", sort=False)
    texts = {sid: list(group["text"]) for sid, group in by_story}
    tokenized = []
    for row in stories.itertuples(index=False):
        if row.story_id not in texts:
            log.warning("story %s has no sentences: skipped", row.story_id)
            continue
        topic = row.topic if isinstance(row.topic, str) and row.topic.strip() else None
        tokenized.append(tokenize_story(vocab, row.story_id, texts[row.story_id], topic, chat))
    capacity = min(settings.max_context_tokens, vocab.n_ctx_train)
    needed = context_size(tokenized, settings.formulations, start)
    n_ctx = min(capacity, -(-needed // 64) * 64)
    log.info(
        "model %s: %d stories, %s prompts, longest sequence %d tokens, context window %d "
        "(cap %d), start token %d",
        model_name,
        len(tokenized),
        prompt,
        needed,
        n_ctx,
        capacity,
        start,
    )
    del vocab
    scorer: Any
    if backend == "transformers":
        from storyflow.backends.transformers import TransformersScorer

        scorer = TransformersScorer(
            model_path,
            dtype=dtype,
            device="cuda" if settings.n_gpu_layers != 0 else "cpu",
            n_threads=settings.n_threads,
        )
    elif backend == "llama.cpp":
        scorer = llama_cpp_scorer(model_path, n_ctx, settings)
    else:
        raise ValueError(f"backend must be llama.cpp or transformers, not {backend!r}")
    log.info(
        "model %s: backend %s, %d pass(es) per batch of at most %d tokens, %d threads",
        model_name,
        type(scorer).__name__,
        settings.n_seq if backend == "llama.cpp" else 1,
        settings.n_batch,
        settings.n_threads,
    )
    counter = PassCounter()
    rows: list[tuple[Any, ...]] = []
    began = time.perf_counter()
    for story in tqdm(tokenized, desc=f"NLL {model_name}", unit="story"):
        terms = score_story(
            scorer, story, settings.formulations, start, settings.max_history, n_ctx, counter
        )
        for formulation, story_terms in terms.items():
            rows.extend(
                story_rows(story, story_terms, model_name, formulation, settings.max_history)
            )
    elapsed = time.perf_counter() - began
    log.info(
        "model %s: %d forward passes, %d tokens evaluated in %.1f s (%.1f tokens/s); "
        "lower bound (prefixes once + each target once per distinct context) %d tokens",
        model_name,
        counter.passes,
        scorer.tokens_evaluated,
        elapsed,
        scorer.tokens_evaluated / elapsed if elapsed else float("nan"),
        counter.tokens,
    )
    table = pd.DataFrame(rows, columns=list(NLL_DTYPES)).astype(NLL_DTYPES)
    n_truncated = int(table["truncated"].sum())
    if n_truncated:
        log.warning("%d rows had their history truncated to fit the context window", n_truncated)
    return table
