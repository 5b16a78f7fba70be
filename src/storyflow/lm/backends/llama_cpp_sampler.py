"""llama.cpp sampler: K continuations of one prompt, up to ``n_seq`` of them per ``llama_decode``.

The prompt is decoded once, into sequence 0, and its KV entries are shared with sequences
1..n_seq-1 (``llama_memory_seq_cp``); then every step decodes one token for each still-running
sample in a single batch (sample j of a chunk is sequence j). More samples than ``n_seq`` are
drawn in chunks of ``n_seq``, each sequence cut back to the prompt in between. ``n_seq = 1`` is
the one-sample-at-a-time path. The tokens are chosen by ``storyflow.lm.sampling`` (the same rule
and per-sample seeds as every backend), from llama.cpp's float32 logits.

The context is the batched scorer's (``llama_lowlevel``): one KV stream per sequence and flash
attention off. How far batched and one-at-a-time texts agree is measured in docs/lm.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np

from storyflow.errors import StoryflowError
from storyflow.lm.backends import model_file
from storyflow.lm.backends.llama_cpp import VocabOnly
from storyflow.lm.backends.llama_lowlevel import SequenceContext
from storyflow.lm.prompts import prompt_tokens
from storyflow.lm.sampling import Sample, SamplingSettings, check_request, generate


class LlamaCppSampler:
    """``Sampler`` running a GGUF model in process with llama.cpp.

    ``n_ctx``: tokens each sample may hold (prompt + generated); ``n_seq``: samples decoded
    together (1 = one at a time); ``n_batch``: most tokens per ``llama_decode`` call (a longer
    prompt is decoded in several). Counters: ``tokens_generated`` (tokens of the returned samples,
    end-of-generation tokens excluded) and ``tokens_evaluated`` (tokens run through the model:
    prompts and every generated token fed back).
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int,
        n_seq: int,
        n_threads: int = 1,
        n_gpu_layers: int = 0,
        n_batch: int = 512,
    ) -> None:
        import llama_cpp

        path = model_file(model_path)
        most = llama_cpp.llama_max_parallel_sequences()
        if not 1 <= n_seq <= most:
            raise StoryflowError(f"n_seq must be 1..{most}, not {n_seq}")
        if n_batch < n_seq:
            raise StoryflowError(f"n_batch ({n_batch}) must be at least n_seq ({n_seq})")
        self.n_ctx = n_ctx
        self.n_seq = n_seq
        self.n_threads = n_threads  # llama.cpp's threads, and the token choice's between steps
        self.vocab = VocabOnly(path)
        self._llama = SequenceContext(
            path,
            n_ctx_seq=n_ctx,
            n_seq=n_seq,
            n_batch=n_batch,
            n_ubatch=n_batch,
            n_threads=n_threads,
            n_gpu_layers=n_gpu_layers,
        )
        self.end_ids = self._llama.end_of_generation_ids()
        self.tokens_generated = 0
        self._prompt: list[int] | None = None  # the prompt held by sequences 0..n_seq-1
        self._prompt_logits: np.ndarray | None = None  # next-token logits after it (float32)

    @property
    def tokens_evaluated(self) -> int:
        return self._llama.tokens_evaluated

    def close(self) -> None:
        """Free llama.cpp's context and model."""
        self._llama.close()

    def prompt_tokens(self, prompt: str) -> list[int]:
        """Token ids of a rendered prompt (:func:`storyflow.lm.prompts.prompt_tokens`)."""
        return prompt_tokens(self.vocab.llm, prompt)

    def decode(self, tokens: Sequence[int]) -> str:
        """Text of generated tokens (special tokens not rendered; a cut-off character dropped)."""
        return self.vocab.llm.detokenize(list(tokens)).decode("utf-8", errors="ignore")

    def sample(self, prompt: str, k: int, settings: SamplingSettings) -> list[Sample]:
        """Samples 0..k-1 of ``prompt``, ``n_seq`` at a time (see the module docstring)."""
        ids = self.prompt_tokens(prompt)
        check_request(len(ids), settings, self.n_ctx)
        prompt_logits = self._hold_prompt(ids)
        self._prompt = None  # until every sequence is back to the prompt (an error may intervene)
        samples: list[Sample] = []
        for start in range(0, k, self.n_seq):
            indices = range(start, min(k, start + self.n_seq))
            step = partial(self._step, [len(ids)] * len(indices))
            chunk = generate(
                prompt_logits, indices, settings, self.decode, self.end_ids, step, self.n_threads
            )
            for seq in range(len(indices)):  # back to the prompt
                self._llama.remove(seq, len(ids))
            samples.extend(chunk)
        self._prompt = ids
        self.tokens_generated += sum(len(s.tokens) for s in samples)
        return samples

    def _step(
        self, positions: list[int], slots: Sequence[int], tokens: Sequence[int]
    ) -> np.ndarray:
        """Decode ``tokens[i]`` at the end of sequence ``slots[i]``; the next-token logits."""
        for i, (slot, token) in enumerate(zip(slots, tokens, strict=True)):
            self._llama.put(i, token, positions[slot], slot, True)
            positions[slot] += 1
        self._llama.decode(len(slots))
        return self._llama.logits(len(slots))

    def _hold_prompt(self, ids: list[int]) -> np.ndarray:
        """Decode the prompt into sequence 0 (unless held), share it; its next-token logits."""
        if self._prompt != ids or self._prompt_logits is None:
            self._prompt = None
            for seq in range(self.n_seq):
                self._llama.remove(seq)
            n_batch = self._llama.n_batch
            for start in range(0, len(ids), n_batch):
                piece = ids[start : start + n_batch]
                for i, token in enumerate(piece):
                    self._llama.put(i, token, start + i, 0, start + i == len(ids) - 1)
                self._llama.decode(len(piece))
            self._prompt_logits = np.array(self._llama.logits(1)[0])
            for seq in range(1, self.n_seq):
                self._llama.copy(0, seq)
        return self._prompt_logits
