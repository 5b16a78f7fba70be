"""transformers (PyTorch) backend of the NLL engine: CPU or GPU, float32 or bfloat16.

Loads either the same GGUF file llama.cpp scores (``gguf_file=``: transformers dequantizes the
weights, so both backends see the same quantized values; needs the ``gguf`` package and an
architecture transformers can read from GGUF, e.g. llama for SmolLM2) or a Hugging Face
checkpoint (a hub id or a local folder).

Token ids: for a GGUF file the ids come from llama.cpp's tokenizer of the same file, so that the
two backends score exactly the same token sequences; for a checkpoint, from its own tokenizer.

KV reuse, as in ``LlamaCppScorer``: the prefix without its last token (the stem) is evaluated
once and its cache kept; each call evaluates the prefix's last token and the continuation on top
of it and then crops the cache back to the stem.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from storyflow.errors import StoryflowError

DTYPES = ("float32", "bfloat16")


class TransformersScorer:
    """Scorer (``tokenize`` / ``start_token`` / ``logprobs``) running a transformers model."""

    def __init__(
        self,
        model: str | Path,
        *,
        dtype: str = "float32",
        device: str = "cpu",
        n_threads: int | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM

        if dtype not in DTYPES:
            raise StoryflowError(f"dtype must be one of {DTYPES}, not {dtype!r}")
        if n_threads:
            torch.set_num_threads(n_threads)
        self.torch = torch
        self.device = device
        path = Path(model)
        self.vocab = None
        if path.suffix == ".gguf":
            if not path.is_file():
                raise StoryflowError(
                    f"model file {path} does not exist (run the materialize_model rule)"
                )
            from storyflow.lm.backends.llama_cpp import VocabOnly

            self.vocab = VocabOnly(path)
            source, kwargs = str(path.parent), {"gguf_file": path.name}
        else:
            from transformers import AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(str(model))
            source, kwargs = str(model), {}
        try:
            self.model = AutoModelForCausalLM.from_pretrained(
                source, dtype=getattr(torch, dtype), **kwargs
            )
        except (ValueError, OSError, ImportError) as err:
            raise StoryflowError(f"transformers cannot load {model}: {err}") from err
        self.model.to(device).eval()
        self.tokens_evaluated = 0
        self._stem: list[int] | None = None
        self._cache = None

    def tokenize(self, text: str) -> list[int]:
        if self.vocab is not None:
            return self.vocab.tokenize(text)
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    @property
    def start_token(self) -> int:
        if self.vocab is not None:
            return self.vocab.start_token
        tok = self.tokenizer
        if tok.bos_token_id is not None and getattr(tok, "add_bos_token", True):
            return int(tok.bos_token_id)
        from storyflow.lm.backends.llama_cpp import END_OF_TEXT

        eot = tok.convert_tokens_to_ids(END_OF_TEXT)
        if isinstance(eot, int) and eot != tok.unk_token_id:
            return eot
        return int(tok.eos_token_id)

    def logprobs(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        """ln p(continuation[t] | prefix + continuation[:t]), the stem's cache reused."""
        torch = self.torch
        stem = list(prefix[:-1])
        with torch.inference_mode():
            if self._stem != stem:
                self._cache = None
                if stem:
                    ids = torch.tensor([stem], device=self.device)
                    self._cache = self.model(input_ids=ids, use_cache=True).past_key_values
                    self.tokens_evaluated += len(stem)
                self._stem = stem
            tokens = [prefix[-1], *continuation]
            ids = torch.tensor([tokens], device=self.device)
            positions = torch.arange(len(stem), len(stem) + len(tokens), device=self.device)
            out = self.model(
                input_ids=ids,
                past_key_values=self._cache,
                position_ids=positions[None],
                use_cache=self._cache is not None,
            )
            if self._cache is not None:  # back to the stem: drop this pass's tokens
                self._cache.crop(-(self._cache.get_seq_length() - len(stem)))
            self.tokens_evaluated += len(tokens)
            logits = out.logits[0, : len(continuation)].float()
            logprobs = torch.log_softmax(logits, dim=-1)
            target = torch.tensor(continuation, device=self.device)[:, None]
            picked = logprobs.gather(1, target)[:, 0]
        return picked.double().cpu().numpy()
