"""transformers (PyTorch) backend: NLL scorer and sampler; CPU or GPU; float32, float16 or bfloat16.

Loads either the same GGUF file llama.cpp scores (``gguf_file=``: transformers dequantizes the
weights, so both backends see the same quantized values; needs the ``gguf`` package and an
architecture transformers can read from GGUF, e.g. llama for SmolLM2) or a Hugging Face
checkpoint (a hub id or a local folder).

Token ids: for a GGUF file the ids come from llama.cpp's tokenizer of the same file, so that the
two backends score exactly the same token sequences; for a checkpoint, from its own tokenizer.

One pass at a time (``n_seq`` 1, the CPU default), with KV reuse as in ``LlamaCppScorer``: the
prefix without its last token (the stem) is evaluated once and its cache kept; each call
evaluates the prefix's last token and the continuation on top of it and then crops the cache
back to the stem. Batched (``n_seq`` > 1, the GPU default):
:meth:`TransformersScorer.logprobs_batch` pads the passes it is given (those of one story) to a
common length, at most ``n_seq`` rows and ``n_batch`` padded tokens per forward pass
(:func:`padded_batches`), and evaluates each whole sequence without a cache. Padding is on the
right, so under the causal mask no real token sees a pad: a row's log-probabilities are its
single-pass ones up to the arithmetic of the larger matrix products (float32: below 1e-5
nats/token, tests/test_checkpoint.py).

``TransformersSampler`` draws samples one at a time with ``storyflow.lm.sampling`` (the token
rule and per-sample seeds of every backend) on the model's logits: the prompt is evaluated once,
each sample extends its cache and is cropped off afterwards.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Self

import numpy as np

from storyflow.errors import StoryflowError
from storyflow.lm.backends import model_file
from storyflow.lm.backends.llama_cpp import VocabOnly
from storyflow.lm.sampling import Sample, SamplingSettings, check_request, generate


class TransformersModel:
    """A transformers causal LM and its tokenizer (llama.cpp's for a GGUF file, see above).

    ``n_seq``: passes evaluated together (rows of one padded batch; 1 = one pass at a time,
    with the stem's cache); ``n_batch``: padded tokens (rows x longest row) per batched forward
    pass; ``vocab``: the vocabulary the NLL plan was made with, when the caller has it (else
    read here from the GGUF or the checkpoint).
    """

    def __init__(
        self,
        model: str | Path,
        *,
        dtype: str = "float32",
        device: str = "cpu",
        n_threads: int | None = None,
        n_seq: int = 1,
        n_batch: int = 2048,
        vocab: Any = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM

        if n_threads:
            torch.set_num_threads(n_threads)
        self.torch = torch
        self.device = device
        self.n_seq, self.n_batch = n_seq, n_batch
        # any causal LM and its tokenizer (of_loaded takes them built elsewhere); transformers'
        # annotations do not type the calls made here (its `to`, under functools.wraps, reads
        # as unbound, and `decode` as returning str or a list)
        self.model: Any
        self.tokenizer: Any
        path = Path(model)
        self.vocab = vocab  # the planner's (storyflow.lm.backends.registry), else built here
        if path.suffix == ".gguf":
            model_file(path)
            self.vocab = vocab or VocabOnly(path)
            source, kwargs = str(path.parent), {"gguf_file": path.name}
        else:
            from transformers import AutoTokenizer

            from storyflow.lm.tokenizer import HfTokenizer, TokenizerVocab

            if path.suffix == ".json":  # a checkpoint's manifest (rule materialize_checkpoint)
                from storyflow.lm.weights import checkpoint

                model = checkpoint(path).folder
            self.tokenizer = AutoTokenizer.from_pretrained(str(model))
            # the ids the NLL plan was made with (storyflow.lm.nll.engine.plan_corpus)
            self.vocab = vocab or TokenizerVocab(HfTokenizer(model))
            source, kwargs = str(model), {}
        try:
            self.model = AutoModelForCausalLM.from_pretrained(
                source, dtype=getattr(torch, dtype), **kwargs
            )
        except (ValueError, OSError, ImportError) as err:
            raise StoryflowError(f"transformers cannot load {model}: {err}") from err
        self.model.to(device).eval()
        self.tokens_evaluated = 0
        self.tokens_padded = 0  # batched passes: rows x width, padding included
        self._stem: list[int] | None = None
        self._cache: Any = None  # the stem's KV cache (a transformers Cache)

    @classmethod
    def of_loaded(
        cls, model: object, tokenizer: object, *, device: str, n_seq: int = 1, n_batch: int = 2048
    ) -> Self:
        """A scorer over a model already in memory (``model``: a transformers causal LM on
        ``device``; ``tokenizer``: its Hugging Face tokenizer): benchmarks on models built from
        a config (random weights of a real shape), with nothing to load."""
        import torch

        self = cls.__new__(cls)
        self.torch, self.device, self.vocab = torch, device, None
        self.model, self.tokenizer = model, tokenizer
        self.n_seq, self.n_batch = n_seq, n_batch
        self.tokens_evaluated, self.tokens_padded, self._stem, self._cache = 0, 0, None, None
        return self

    def tokenize(self, text: str) -> list[int]:
        if self.vocab is not None:
            return self.vocab.tokenize(text)
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    @property
    def start_token(self) -> int:
        if self.vocab is not None:
            return self.vocab.start_token
        tok = self.tokenizer  # a model built in memory (of_loaded)
        if tok.bos_token_id is not None and getattr(tok, "add_bos_token", True):
            return int(tok.bos_token_id)
        return int(tok.eos_token_id)


class TransformersScorer(TransformersModel):
    """Scorer (``tokenize`` / ``start_token`` / ``logprobs``) running a transformers model."""

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

    def logprobs_batch(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[np.ndarray]:
        """:meth:`logprobs` of each (prefix, continuation) request, in order; with ``n_seq`` > 1
        the requests go in padded batches (:func:`padded_batches`), each sequence evaluated
        whole (no cache)."""
        if self.n_seq <= 1:
            return [self.logprobs(prefix, continuation) for prefix, continuation in requests]
        torch = self.torch
        sequences = [[*prefix, *continuation] for prefix, continuation in requests]
        results: list[np.ndarray] = [np.empty(0)] * len(requests)
        with torch.inference_mode():
            for batch in padded_batches([len(s) for s in sequences], self.n_seq, self.n_batch):
                width = max(len(sequences[i]) for i in batch)
                ids = torch.zeros((len(batch), width), dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, i in enumerate(batch):
                    ids[row, : len(sequences[i])] = torch.tensor(sequences[i])
                    mask[row, : len(sequences[i])] = 1
                logits = self.model(
                    input_ids=ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    use_cache=False,
                ).logits
                self.tokens_evaluated += int(mask.sum())
                self.tokens_padded += ids.numel()
                for row, i in enumerate(batch):
                    prefix, continuation = requests[i]
                    first = len(prefix) - 1  # the logits that predict continuation[0]
                    rows = logits[row, first : first + len(continuation)].float()
                    target = torch.tensor(list(continuation), device=self.device)[:, None]
                    picked = torch.log_softmax(rows, dim=-1).gather(1, target)[:, 0]
                    results[i] = picked.double().cpu().numpy()
        return results


def padded_batches(lengths: Sequence[int], n_seq: int, n_batch: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped into batches, longest first: each batch at most ``n_seq``
    rows and ``n_batch`` padded tokens (rows x its longest length); a sequence longer than
    ``n_batch`` goes alone.

    Rows are not held to a minimum share of the longest: the passes of one story run from the
    whole story down to its last sentence, and cutting their batch where rows would be short
    (at most a quarter padding) made the forward passes smaller and slower on every measured
    shape but the largest (docs/engine.md, "GPU: transformers, batched")."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches:
            batch = batches[-1]
            width = lengths[batch[0]]  # the longest of the batch: it came first
            if len(batch) < n_seq and (len(batch) + 1) * width <= n_batch:
                batch.append(i)
                continue
        batches.append([i])
    return batches


class TransformersSampler(TransformersModel):
    """``Sampler`` running a transformers model, one sample at a time.

    Token ids, text and end-of-generation tokens come from llama.cpp's tokenizer for a GGUF file
    (as in ``LlamaCppSampler``), else from the checkpoint's tokenizer. Logits are taken in float32
    whatever the model's dtype. ``tokens_generated`` counts the tokens of returned samples.
    """

    tokens_generated: int = 0  # tokens of the returned samples (all calls)

    @cached_property
    def n_ctx(self) -> int:
        """The longest sequence the model takes (its ``max_position_embeddings``)."""
        return int(getattr(self.model.config, "max_position_embeddings", 2**31 - 1))

    @cached_property
    def end_ids(self) -> Collection[int]:
        """Token ids that end a sample (llama.cpp's ``is_eog`` set for a GGUF file, else the
        checkpoint's EOS ids)."""
        if isinstance(self.vocab, VocabOnly):
            import llama_cpp

            from storyflow.lm.backends.llama_lowlevel import end_of_generation_ids

            return end_of_generation_ids(llama_cpp.llama_model_get_vocab(self.vocab.llm.model))
        ends = self.model.generation_config.eos_token_id
        ends = [ends] if isinstance(ends, int) else list(ends or [])
        return frozenset([*ends, self.tokenizer.eos_token_id]) - {None}

    def prompt_tokens(self, prompt: str) -> list[int]:
        """Token ids of a rendered prompt: special tokens parsed, BOS first when it is added."""
        if isinstance(self.vocab, VocabOnly):
            from storyflow.lm.prompts import prompt_tokens

            return prompt_tokens(self.vocab.llm, prompt)
        tok = self.tokenizer
        ids = list(tok.encode(prompt, add_special_tokens=False))
        bos = tok.bos_token_id if getattr(tok, "add_bos_token", False) else None
        return [bos, *ids] if bos is not None and (not ids or ids[0] != bos) else ids

    def decode(self, tokens: Sequence[int]) -> str:
        """Text of generated tokens (special tokens not rendered)."""
        if isinstance(self.vocab, VocabOnly):
            return self.vocab.llm.detokenize(list(tokens)).decode("utf-8", errors="ignore")
        return self.tokenizer.decode(list(tokens), skip_special_tokens=True)

    def sample(self, prompt: str, k: int, settings: SamplingSettings) -> list[Sample]:
        """Samples 0..k-1 of ``prompt``, one after another from the prompt's cache."""
        torch = self.torch
        ids = self.prompt_tokens(prompt)
        check_request(len(ids), settings, self.n_ctx)
        with torch.inference_mode():
            out = self.model(input_ids=torch.tensor([ids], device=self.device), use_cache=True)
            cache = out.past_key_values
            prompt_logits = out.logits[0, -1].float().cpu().numpy()
            samples: list[Sample] = []
            for index in range(k):
                step = partial(self._step, cache, [len(ids)])
                samples += generate(
                    prompt_logits, [index], settings, self.decode, self.end_ids, step
                )
                cache.crop(-(cache.get_seq_length() - len(ids)))  # back to the prompt
        self.tokens_generated += sum(len(s.tokens) for s in samples)
        return samples

    def _step(
        self, cache: object, position: list[int], slots: Sequence[int], tokens: Sequence[int]
    ) -> np.ndarray:
        """Feed the sample's next token at ``position[0]``; its next-token logits (float32)."""
        torch = self.torch
        out = self.model(
            input_ids=torch.tensor([list(tokens)], device=self.device),
            past_key_values=cache,
            position_ids=torch.tensor([position], device=self.device),
            use_cache=True,
        )
        position[0] += 1
        return out.logits[:, -1].float().cpu().numpy()
