"""Batched llama.cpp scorer: several passes in one ``llama_decode`` call, one sequence id each.

Each pass of ``storyflow.lm.nll`` (prefix, then a run of sentences) gets its own sequence id, so
up to ``n_seq`` passes (of one story and both formulations, or of any requests given together)
share one batch of at most ``n_batch`` tokens and a GPU is kept busy with many short passes
instead of one. Built on llama-cpp-python's low-level API:

* **one KV stream per sequence** (``kv_unified = false``). A unified KV cache is not used: with it,
  on llama.cpp's CPU backend, sequences decoded together in a ubatch of 32 or more tokens get
  logits that differ from separate passes by up to 0.5 nats/token (measured here on SmolLM2;
  llama.cpp issue #24962). With one stream per sequence and equal lengths (below), a batched
  pass equals a separate pass;
* **flash attention off**, as in ``llama_cpp.Llama`` (``flash_attn=False``), the reference the
  single-sequence scorer and the tests use: llama.cpp's ``auto`` setting turns it on for the CPU,
  which moves log-probs by up to 0.8 nats/token on SmolLM2 (measured);
* **stems shared by copy**: the stem of a pass (its prefix without the last token: start token,
  topic or chat scaffolding) is decoded once, alone in a batch (as the single-sequence scorer
  does), into one of ``STEM_SLOTS`` extra sequences, and copied (``llama_memory_seq_cp``) into
  each sequence that runs a pass with it; after a batch every sequence is cut back to its stem,
  so the next pass with the same stem there needs no copy;
* **equal lengths**: llama.cpp splits a batch of several sequences into ubatches that take the
  same number of tokens from every sequence (``split_equal``). With passes of different lengths
  a pass is then evaluated in pieces sized by its neighbours, and 1% of SmolLM2's terms moved
  by up to 0.06 nats/token. So passes are taken longest first, a batch holds passes at least
  ``PAD_SHARE`` as long as its longest, and each is padded after its last read token (repeats
  of its last token; causal attention keeps them out of every logit read) to that length: every
  pass is cut at the same places, and SmolLM2's batched terms equal separate passes exactly.
  The padding costs a few per cent of tokens (2-5% measured);
* **deterministic batches**: the batches depend only on the requests (pass r of a batch is
  sequence r); ``score_corpus`` sends the passes of one story at a time, so a story's NLLs do not
  depend on the shard or the other stories;
* **logits only where read**: the prefix's last token and every continuation token but the last,
  so the logits buffer is (tokens in a batch) × vocabulary, never the context × vocabulary.

Gemma 3's logits also move with a batch's length on their own (docs/engine.md): batched, 96% of
its terms equal separate passes and the rest differ by at most 0.032 nats/token (measured).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from storyflow.errors import StoryflowError
from storyflow.lm.backends import BatchScorer, common_prefix, model_file
from storyflow.lm.backends.llama_lowlevel import SequenceContext

if TYPE_CHECKING:
    from storyflow.lm.backends.llama_cpp import VocabOnly


STEM_SLOTS = 2  # extra sequences keeping stems (topic and context prefix of the current story)
PAD_SHARE = 0.9  # a pass joins a batch when its length is at least this share of the longest
#: The same for branches (questions after one story): short, of varied length, and many to a
#: batch; padding them to twice the shortest costs fewer tokens than a batch per length.
BRANCH_PAD_SHARE = 0.5


class BatchedLlamaCppScorer(BatchScorer):
    """llama.cpp scorer evaluating up to ``n_seq`` passes per batch (``logprobs_batch``).

    ``n_ctx`` is the longest sequence a pass needs (the engine's window); every sequence gets a
    KV cache of that size. ``n_batch`` is the most tokens per ``llama_decode`` call (a single
    pass longer than that is decoded alone in a batch of its own length); ``logits_rows`` =
    max(n_batch, n_ctx) bounds the logits buffer.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int,
        n_seq: int,
        n_batch: int = 2048,
        n_threads: int = 1,
        n_gpu_layers: int = 0,
        logsoftmax_workers: int | None = None,
        branches: bool = False,
    ) -> None:
        import llama_cpp

        path = model_file(model_path)
        most = llama_cpp.llama_max_parallel_sequences() - STEM_SLOTS
        if not 1 <= n_seq <= most:
            raise StoryflowError(f"nll.n_seq must be 1..{most}, not {n_seq}")
        self.path = path
        self.n_ctx = n_ctx
        self.n_seq = n_seq
        self.n_batch = n_batch
        self.workers = logsoftmax_workers or n_threads
        # a single pass may be longer than n_batch: let one decode call hold it; logits are read
        # at most at every token of a decode call
        self.logits_rows = max(n_batch, n_ctx)
        self._llama = SequenceContext(
            path,
            n_ctx_seq=n_ctx,
            n_seq=n_seq + STEM_SLOTS,
            n_batch=self.logits_rows,
            n_ubatch=min(n_batch, self.logits_rows),
            n_threads=n_threads,
            n_gpu_layers=n_gpu_layers,
        )
        self.branches = branches
        self._held: list[tuple[int, ...] | None] = [None] * n_seq  # stem in each sequence's KV
        self._slots: OrderedDict[tuple[int, ...], int] = OrderedDict()  # stem -> its sequence

    @property
    def tokens_evaluated(self) -> int:
        """Tokens run through the model (all calls)."""
        return self._llama.tokens_evaluated

    @property
    def batches(self) -> int:
        """``llama_decode`` calls."""
        return self._llama.batches

    def close(self) -> None:
        """Free the llama.cpp batch, context and model (also done when the object is collected)."""
        self._llama.close()

    @cached_property
    def vocab(self) -> VocabOnly:
        """The model's tokenizer, loaded on first use (``score_corpus`` tokenizes beforehand)."""
        from storyflow.lm.backends.llama_cpp import VocabOnly

        return VocabOnly(self.path)

    def logprobs_batch(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[np.ndarray]:
        """Log-probs of each (prefix, continuation) request, evaluated ``n_seq`` at a time.

        Requests are taken longest first into batches of at most ``n_seq`` passes and
        ``n_batch`` tokens (padded), each pass at least ``PAD_SHARE`` of the batch's longest;
        the results come back in the order of ``requests``.
        """
        for prefix, continuation in requests:
            if not prefix or not continuation:
                raise ValueError("prefix and continuation must not be empty")
            if len(prefix) + len(continuation) > self.n_ctx:
                raise ValueError("sequence longer than the context window")
        if self.branches:
            return self._branch_batch(requests)
        order = sorted(range(len(requests)), key=lambda r: -len(requests[r][1]))
        out: list[np.ndarray | None] = [None] * len(requests)
        start = 0
        while start < len(order):
            width = len(requests[order[start]][1]) + 1  # the longest pass of the batch
            stop = start + 1
            while (
                stop < len(order)
                and stop - start < self.n_seq
                and (stop - start + 1) * width <= self.n_batch
                and len(requests[order[stop]][1]) + 1 >= PAD_SHARE * width
            ):
                stop += 1
            chosen = order[start:stop]
            for r, result in zip(
                chosen, self._wave([requests[r] for r in chosen], width), strict=True
            ):
                out[r] = result
            start = stop
        missing = [r for r, result in enumerate(out) if result is None]
        if missing:  # every request is in exactly one batch; anything else is a bug here
            raise RuntimeError(f"requests {missing} were not scored")
        return [result for result in out if result is not None]

    # --- branches of one shared beginning ------------------------------------------------------

    def _branch_batch(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[np.ndarray]:
        """``logprobs_batch`` with ``branches``: the requests' shared beginning decoded once, the
        rest of each request branched from it, up to ``n_seq`` branches per ``llama_decode``.

        A *pass* is what a request needs evaluated, its prefix and all of its continuation but
        the last token; requests needing the same pass (single-token answer labels after one
        question) share it. The *stem* is the longest beginning all passes share, short of
        every prefix's last token (so every row read comes from a branch): decoded alone into a
        stem slot and copied into each branch's sequence. Passes go longest first into batches
        of at most ``n_seq`` passes and ``n_batch`` tokens, each at least ``BRANCH_PAD_SHARE`` of
        the batch's longest and padded to it. Which passes share a batch
        depends only on the requests of this call, never on earlier calls: an answer depends on
        its own call's requests alone (a resumed job asks a whole call again,
        storyflow.lm.connect).
        """
        passes: dict[tuple[int, ...], int] = {}
        of_request = []
        for prefix, continuation in requests:
            key = (*prefix, *continuation[:-1])
            of_request.append(passes.setdefault(key, len(passes)))
        keys = list(passes)
        first_read = [len(k) for k in keys]  # the first row each pass must produce
        for (prefix, _), p in zip(requests, of_request, strict=True):
            first_read[p] = min(first_read[p], len(prefix) - 1)
        stem = keys[0][: min(first_read)]
        for key in keys[1:]:
            stem = stem[: common_prefix(stem, key)]
        order = sorted(range(len(keys)), key=lambda p: -len(keys[p]))
        rows_of: dict[int, np.ndarray] = {}
        start = 0
        while start < len(order):
            width = len(keys[order[start]]) - len(stem)
            stop = start + 1
            while (
                stop < len(order)
                and stop - start < self.n_seq
                and (stop - start + 1) * width <= self.n_batch
                and len(keys[order[stop]]) - len(stem) >= BRANCH_PAD_SHARE * width
            ):
                stop += 1
            chosen = order[start:stop]
            batch_rows = self._branch_wave(
                stem, [keys[p] for p in chosen], [first_read[p] for p in chosen], width
            )
            rows_of.update(zip(chosen, batch_rows, strict=True))
            start = stop
        from storyflow.lm.backends.llama_cpp import token_logprobs

        results = []
        for (prefix, continuation), p in zip(requests, of_request, strict=True):
            offset = len(prefix) - 1 - first_read[p]
            rows = rows_of[p][offset : offset + len(continuation)]
            results.append(token_logprobs(rows, continuation, workers=self.workers))
        return results

    def _branch_wave(
        self,
        stem: tuple[int, ...],
        keys: Sequence[tuple[int, ...]],
        first_read: Sequence[int],
        width: int,
    ) -> list[np.ndarray]:
        """One batch of branches after ``stem``: pass r runs as sequence r; the logits rows of
        positions ``first_read[r]`` to the end of its pass (copied out), per pass."""
        self._load_stems([stem] * len(keys))
        n = 0
        counts = []
        for seq, (key, first) in enumerate(zip(keys, first_read, strict=True)):
            tokens = list(key[len(stem) :])
            tokens += [tokens[-1]] * (width - len(tokens))  # padding after the last row read
            for k, token in enumerate(tokens):
                position = len(stem) + k
                self._llama.put(n, token, position, seq, first <= position < len(key))
                n += 1
            counts.append(len(key) - first)
        self._llama.decode(n)
        logits = self._llama.logits(sum(counts))
        out, row = [], 0
        for count in counts:
            out.append(np.array(logits[row : row + count]))
            row += count
        for seq in range(len(keys)):  # back to the stem
            self._llama.remove(seq, len(stem))
        return out

    # --- one batch ---------------------------------------------------------------------------

    def _wave(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]], width: int
    ) -> list[np.ndarray]:
        """One batch: request r runs as sequence r (the same requests always batch the same way)."""
        stems = [tuple(prefix[:-1]) for prefix, _ in requests]
        self._load_stems(stems)
        n = 0
        for seq, ((prefix, continuation), stem) in enumerate(zip(requests, stems, strict=True)):
            tokens = [prefix[-1], *continuation]
            # padding after the last token read, so that every sequence has the same length
            tokens += [tokens[-1]] * (min(width, self.n_ctx - len(stem)) - len(tokens))
            for k, token in enumerate(tokens):
                self._llama.put(n, token, len(stem) + k, seq, k < len(continuation))
                n += 1
        self._llama.decode(n)
        logits = self._llama.logits(sum(len(continuation) for _, continuation in requests))
        from storyflow.lm.backends.llama_cpp import token_logprobs

        results = []
        row = 0
        for _, continuation in requests:
            rows = logits[row : row + len(continuation)]
            results.append(token_logprobs(rows, continuation, workers=self.workers))
            row += len(continuation)
        for seq, stem in enumerate(stems):  # back to the stem
            self._llama.remove(seq, len(stem))
        return results

    def _load_stems(self, stems: Sequence[tuple[int, ...]]) -> None:
        """Put stem r in sequence r's KV cache, unless it is already there.

        Stems live in ``STEM_SLOTS`` extra sequences (the most recently used stems): a new stem
        is decoded there once, alone in a batch (so its cache is the same whatever else is
        scored), and copied to the sequences that need it.
        """
        for seq, stem in enumerate(stems):
            if self._held[seq] == stem:
                continue
            self._llama.remove(seq)
            if stem:
                self._llama.copy(self._stem_slot(stem), seq)
            self._held[seq] = stem

    def _stem_slot(self, stem: tuple[int, ...]) -> int:
        """The sequence holding ``stem``, decoding it into the least recently used slot if new."""
        if stem in self._slots:
            self._slots.move_to_end(stem)
            return self._slots[stem]
        if len(self._slots) < STEM_SLOTS:
            slot = self.n_seq + len(self._slots)
        else:
            _, slot = self._slots.popitem(last=False)
            self._llama.remove(slot)
        for pos, token in enumerate(stem):
            self._llama.put(pos, token, pos, slot, False)
        self._llama.decode(len(stem))
        self._slots[stem] = slot
        return slot
