"""llama-cpp-python backend: log-probabilities of a continuation after a cached prefix.

The scorer reads llama.cpp's ``logits_all`` scores and takes their log-softmax itself (natural
log, nats); ``create_completion(echo=True)`` is not used because it shifts log-probs for models
without a BOS token. ``VocabOnly`` loads a GGUF's tokenizer without its weights.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from storyflow.lm.backends import common_prefix, model_file

log = logging.getLogger(__name__)


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


def token_logprobs(
    logits: np.ndarray, targets: Sequence[int], chunk: int = 16, workers: int = 1
) -> np.ndarray:
    """Log-softmax of each logits row at its target id (natural log, float64).

    Only the rows given are read (the scored positions), in chunks of ``chunk`` rows, by
    ``workers`` threads (numpy releases the GIL in these loops; the results do not depend on
    the number of workers). Per row: its maximum, the exponentials of the shifted row written
    into a scratch buffer kept per thread (a fresh buffer of chunk × vocabulary floats per chunk
    would be faulted in page by page each time), summed in float32 (numpy's pairwise summation:
    relative error about 1e-7, i.e. 1e-7 nats), and the target's logit minus the log of the
    sum. Over a 262k vocabulary this costs a few passes over each row; on a GPU it, not the
    forward pass, was the engine's main cost (docs/engine.md).
    """
    out = np.empty(len(targets), dtype=np.float64)
    target_ids = np.asarray(targets)

    def rows_from(start: int) -> None:
        rows = np.asarray(logits[start : start + chunk], dtype=np.float32)
        peak = rows.max(axis=1, keepdims=True)
        shifted = _scratch(rows.shape)
        np.subtract(rows, peak, out=shifted)
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


_local = threading.local()


def _scratch(shape: tuple[int, int]) -> np.ndarray:
    """This thread's float32 scratch buffer of ``shape`` (a view of one kept allocation)."""
    size = shape[0] * shape[1]
    buffer = getattr(_local, "buffer", None)
    if buffer is None or buffer.size < size:
        buffer = _local.buffer = np.empty(size, dtype=np.float32)
    return buffer[:size].reshape(shape)


@cache
def _pool(workers: int) -> ThreadPoolExecutor:
    """A thread pool for the log-softmax, one per worker count, kept for the process."""
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="logsoftmax")


class LlamaCppScorer:
    """llama-cpp-python backend: log-probs computed from ``logits_all`` scores.

    ``create_completion(echo=True, logprobs=...)`` is not used: it shifts log-probs for models
    without a BOS token. The prefix's KV cache is kept between calls with the same prefix.

    ``share_prefix=True`` (many short continuations after one shared beginning: questions about
    one story, yes/no labels after one question) keeps every token in the KV cache between calls
    and evaluates only what a request adds to the longest beginning it shares with the cached
    tokens; the logits rows of the shared positions are read from the earlier pass, and the
    continuation's last token, whose logits nothing reads, is not evaluated. Single-token
    answers after one prompt then cost one pass together. The reused rows and KV entries come
    from other batches than in a from-scratch pass, which moves log-probs by a small,
    model-dependent amount (docs/lm.md, "Shared prefixes"); off by default, so the NLL
    engine's scores do not depend on the order of its requests.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int,
        n_threads: int = 1,
        n_gpu_layers: int = 0,
        n_batch: int = 512,
        share_prefix: bool = False,
    ) -> None:
        from llama_cpp import Llama

        path = model_file(model_path)
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
        self._evaluated = 0  # tokens of the finished llama.cpp calls (tokens_evaluated)
        self._running_from: int | None = None  # llm.n_tokens when the call under way began
        self._stem: list[int] | None = None
        self.share_prefix = share_prefix
        self._cached: list[int] = []  # share_prefix: the tokens whose KV entries and rows are kept

    @property
    def tokens_evaluated(self) -> int:
        """Tokens run through the model so far (all calls), the call under way counted as
        llama.cpp decodes it, ``n_batch`` tokens at a time (an NLL shard's progress lines read
        it from another thread while a long pass is decoded)."""
        start = self._running_from
        running = 0 if start is None else max(0, self.llm.n_tokens - start)
        return self._evaluated + running

    def _eval(self, tokens: Sequence[int]) -> None:
        """``tokens`` decoded after the cached ones (llama.cpp's ``eval``), and counted."""
        self._running_from = self.llm.n_tokens
        try:
            self.llm.eval(list(tokens))
        finally:
            self._running_from = None
        self._evaluated += len(tokens)

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
        if self.share_prefix:
            return self._shared_logprobs(prefix, continuation)
        stem = list(prefix[:-1])
        if self._stem != stem:
            self.llm.reset()
            if stem:
                self._eval(stem)
            self._stem = stem
        self.llm.n_tokens = len(stem)  # drop the previous pass, keep the stem's KV cache
        self._eval([prefix[-1], *continuation])
        # logits at position p predict the token at p + 1: the prefix's last token is at len(stem)
        return token_logprobs(
            self.llm.scores[len(stem) : len(stem) + len(continuation)],
            continuation,
            workers=self.workers,
        )

    def _shared_logprobs(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        """:meth:`logprobs` with the longest common beginning of requests reused (share_prefix).

        Position p's logits row is written when token p is evaluated; a kept position has the
        same tokens before it as when it was evaluated, so its row still holds its logits.
        """
        needed = [*prefix, *continuation[:-1]]  # rows len(prefix) - 1 .. len(needed) - 1 are read
        keep = common_prefix(self._cached, needed)
        if keep < len(needed):
            if keep == 0:
                self.llm.reset()
            self.llm.n_tokens = keep  # eval() drops the KV entries from here on
            self._eval(needed[keep:])
        self._cached = needed if keep < len(needed) else self._cached
        start = len(prefix) - 1
        return token_logprobs(
            self.llm.scores[start : start + len(continuation)], continuation, workers=self.workers
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


#: :func:`training_context` of a GGUF without ``<arch>.context_length``: no limit of its own
#: (the windows are then bounded by the config alone, e.g. ``nll.max_context_tokens``).
UNKNOWN_TRAINING_CONTEXT = 2**31 - 1


def training_context(llm: Any) -> int:
    """The model's training context length in tokens: the GGUF's ``<arch>.context_length``
    (e.g. ``qwen2.context_length`` = 32768 for Qwen2.5-Coder-1.5B-Instruct, as its model card
    states; 8192 for SmolLM2-135M-Instruct). :data:`UNKNOWN_TRAINING_CONTEXT`, with a warning
    naming the key, when the file lacks it."""
    meta = llm.metadata
    key = f"{meta.get('general.architecture', '')}.context_length"
    value = meta.get(key)
    if value:
        return int(value)
    name = str(meta.get("general.name", "model"))
    if name not in _WARNED_UNKNOWN_CONTEXT:  # once per model and process
        _WARNED_UNKNOWN_CONTEXT.add(name)
        log.warning(
            "%s: the GGUF has no %s: its training context is unknown, so storyflow takes no "
            "limit from the model (only the config's window settings bound it)",
            name,
            key,
        )
    return UNKNOWN_TRAINING_CONTEXT


_WARNED_UNKNOWN_CONTEXT: set[str] = set()


#: llama.cpp's warning when it makes a context for a vocabulary-only model, whose
#: hyperparameters it does not read: that model's trained context shows as 0 there. It says
#: nothing about the file (:func:`training_context` reads the GGUF key), and llama-cpp-python
#: prints llama.cpp's warnings even with ``verbose=False``; :func:`load_vocab_only` drops it.
VOCAB_ONLY_NOISE = "n_ctx_train (0)"


def load_vocab_only(path: str | Path) -> Any:
    """A llama-cpp-python ``Llama`` with only the vocabulary and metadata of the GGUF at
    ``path`` (no weights), without llama.cpp's :data:`VOCAB_ONLY_NOISE` warning: what else it
    prints to stderr while loading is passed on unchanged."""
    from llama_cpp import Llama

    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            return Llama(model_path=str(path), vocab_only=True, verbose=False)
    finally:
        for line in captured.getvalue().splitlines(keepends=True):
            if VOCAB_ONLY_NOISE not in line:
                sys.stderr.write(line)


class VocabOnly:
    """Tokenizer of a GGUF model without its weights (used to size the context window);
    ``n_ctx_train``: :func:`training_context`."""

    def __init__(self, model_path: str | Path) -> None:
        path = model_file(model_path)
        self.llm = load_vocab_only(path)
        self.n_ctx_train = training_context(self.llm)

    def tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def text(self, ids: Sequence[int]) -> str:
        """The text of ``ids``, special tokens written out (a served model's text prompt)."""
        return self.llm.detokenize(list(ids), special=True).decode("utf-8", errors="replace")

    @property
    def start_token(self) -> int:
        return start_token_of(self.llm)
