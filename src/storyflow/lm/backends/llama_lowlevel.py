"""A llama.cpp model and context with several sequences, through llama-cpp-python's low-level API.

Shared by the batched scorer (``batched.py``) and the sampler (``llama_cpp_sampler.py``). The
context is set up the way both need it (the reasons are measured in ``batched.py``):

* **one KV stream per sequence** (``kv_unified = false``): with a unified cache llama.cpp's CPU
  backend gives sequences decoded together logits that differ from separate passes;
* **flash attention off**, as in ``llama_cpp.Llama``, the reference of every test;
* each sequence gets a KV cache of ``n_ctx_seq`` tokens (the context holds ``n_ctx_seq ×
  n_seq`` cells); a ``llama_decode`` call takes at most ``n_batch`` tokens and returns logits
  only for the tokens marked in the batch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from storyflow.errors import StoryflowError


class SequenceContext:
    """A loaded model, its context of ``n_seq`` sequences and one reusable token batch.

    Counters: ``tokens_evaluated`` (tokens run through the model) and ``batches``
    (``llama_decode`` calls).
    """

    def __init__(
        self,
        path: Path,
        *,
        n_ctx_seq: int,
        n_seq: int,
        n_batch: int,
        n_ubatch: int,
        n_threads: int,
        n_gpu_layers: int,
    ) -> None:
        import llama_cpp

        self.lib = llama_cpp
        model_params = llama_cpp.llama_model_default_params()
        model_params.n_gpu_layers = n_gpu_layers
        self._model = llama_cpp.llama_model_load_from_file(str(path).encode(), model_params)
        if not self._model:
            raise StoryflowError(f"llama.cpp cannot load {path}")
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx_seq * n_seq
        params.n_seq_max = n_seq
        params.kv_unified = False
        params.n_batch = n_batch
        params.n_ubatch = n_ubatch
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        params.no_perf = True
        self._ctx = llama_cpp.llama_init_from_model(self._model, params)
        if not self._ctx:
            llama_cpp.llama_model_free(self._model)
            raise StoryflowError(f"llama.cpp cannot create a context for {path}")
        self._memory = llama_cpp.llama_get_memory(self._ctx)
        self.vocab = llama_cpp.llama_model_get_vocab(self._model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.n_batch = n_batch
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self.tokens_evaluated = 0
        self.batches = 0

    def close(self) -> None:
        """Free the batch, context and model (also done when the object is collected)."""
        if getattr(self, "_ctx", None):
            self.lib.llama_batch_free(self._batch)
            self.lib.llama_free(self._ctx)
            self.lib.llama_model_free(self._model)
            self._ctx = None

    def __del__(self) -> None:
        self.close()

    def put(self, i: int, token: int, pos: int, seq: int, logits: bool) -> None:
        """Batch entry ``i``: ``token`` at position ``pos`` of sequence ``seq`` (logits wanted?)."""
        batch = self._batch
        batch.token[i] = token
        batch.pos[i] = pos
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = seq
        batch.logits[i] = logits

    def decode(self, n_tokens: int) -> None:
        """Run the first ``n_tokens`` entries of the batch through the model."""
        if n_tokens > self.n_batch:
            raise ValueError(f"batch of {n_tokens} tokens exceeds {self.n_batch}")
        self._batch.n_tokens = n_tokens
        status = self.lib.llama_decode(self._ctx, self._batch)
        if status != 0:
            raise StoryflowError(f"llama_decode failed with status {status} ({n_tokens} tokens)")
        self.tokens_evaluated += n_tokens
        self.batches += 1

    def logits(self, n_outputs: int) -> np.ndarray:
        """The last decode's logits: one float32 row per entry marked for logits, in batch order.

        A view of llama.cpp's buffer, valid until the next decode (copy rows that must last).
        """
        return np.ctypeslib.as_array(
            self.lib.llama_get_logits(self._ctx), shape=(n_outputs, self.n_vocab)
        )

    def remove(self, seq: int, start: int = 0) -> None:
        """Drop sequence ``seq``'s KV entries from position ``start`` on (0: all of them)."""
        self.lib.llama_memory_seq_rm(self._memory, seq, start if start > 0 else -1, -1)

    def copy(self, source: int, target: int) -> None:
        """Share all of sequence ``source``'s KV entries with sequence ``target``."""
        self.lib.llama_memory_seq_cp(self._memory, source, target, -1, -1)

    def end_of_generation_ids(self) -> frozenset[int]:
        """Token ids that end generation (see :func:`end_of_generation_ids`)."""
        return end_of_generation_ids(self.vocab)


def end_of_generation_ids(vocab: object) -> frozenset[int]:
    """Token ids of a llama.cpp vocabulary (a ``llama_vocab`` pointer) that end generation.

    llama.cpp's ``is_eog`` set: EOS, end-of-turn and the like (SmolLM2-Instruct: ``<|endoftext|>``,
    ``<|im_end|>``, ``<reponame>``; Gemma 3: ``<eos>``, ``<end_of_turn>``, ``</s>``).
    """
    import llama_cpp

    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    return frozenset(i for i in range(n_vocab) if llama_cpp.llama_vocab_is_eog(vocab, i))
