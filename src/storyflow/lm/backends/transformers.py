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
back to the stem. Batched (``n_seq`` > 1, the GPU default; closed-choice answers asked together,
``branches``): :meth:`TransformersScorer.padded` evaluates the requests it is given as rows of
padded batches (:func:`~storyflow.lm.backends.padded_batches`: at most ``n_seq`` rows and
``n_batch`` padded tokens per forward pass, longest first), each row without a cache. Padding is
on the right, so under the causal mask no real token sees a pad: a row's log-probabilities are
its single-pass ones up to the arithmetic of the larger matrix products (float32: below 1e-5
nats/token, tests/test_checkpoint.py). The NLL engine hands it the passes of a whole shard,
already packed (``storyflow.lm.nll.packing``).

``TransformersSampler`` draws up to ``n_seq`` samples of a prompt together, one batch per step,
with ``storyflow.lm.sampling`` (the token rule and per-sample seeds of every backend) on the
model's logits: the prompt is evaluated once and its cache copied to one row per sample.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Self

import numpy as np

from storyflow.errors import StoryflowError
from storyflow.lm.backends import model_file, padded_batches
from storyflow.lm.backends.llama_cpp import VocabOnly
from storyflow.lm.sampling import Sample, SamplingSettings, check_request, generate

#: Float32 logits in one chunk of a padded batch's log-softmax (rows read x vocabulary): 2**25
#: floats, 128 MiB, whatever the batch.
LOGSOFTMAX_CHUNK = 2**25


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
        in padded batches of at most ``n_seq`` rows and ``n_batch`` tokens (:meth:`padded`)."""
        if self.n_seq <= 1:
            return [self.logprobs(prefix, continuation) for prefix, continuation in requests]
        return self.padded(requests, self.n_seq, self.n_batch)

    def padded(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]], rows: int, n_batch: int
    ) -> list[np.ndarray]:
        """:meth:`logprobs` of each (prefix, continuation) request, in order, evaluated as rows
        of padded batches of at most ``rows`` rows and ``n_batch`` padded tokens
        (:func:`~storyflow.lm.backends.padded_batches`, longest first), without a cache.

        A row is a *pass*: a request's prefix and continuation without its last token (whose
        logits nothing reads); requests needing the same pass (single-token answer labels
        after one prompt) share its row. The batches depend only on ``requests``.
        """
        passes: dict[tuple[int, ...], int] = {}
        of_request = []
        for prefix, continuation in requests:
            if not prefix or not continuation:
                raise ValueError("prefix and continuation must not be empty")
            of_request.append(passes.setdefault((*prefix, *continuation[:-1]), len(passes)))
        keys = list(passes)
        readers: list[list[int]] = [[] for _ in keys]
        for r, p in enumerate(of_request):
            readers[p].append(r)
        results: list[np.ndarray] = [np.empty(0)] * len(requests)
        with self.torch.inference_mode():
            for batch in padded_batches([len(key) for key in keys], rows, n_batch):
                reads = [(row, r) for row, p in enumerate(batch) for r in readers[p]]
                picked = self._padded_pass(
                    [keys[p] for p in batch], [(row, requests[r]) for row, r in reads]
                )
                for (_, r), values in zip(reads, picked, strict=True):
                    results[r] = values
        return results

    @cached_property
    def _keeps_logits(self) -> bool:
        """Whether the model's forward takes ``logits_to_keep`` (transformers' causal LMs)."""
        return "logits_to_keep" in inspect.signature(self.model.forward).parameters

    def _padded_pass(
        self,
        rows: Sequence[Sequence[int]],
        reads: Sequence[tuple[int, tuple[Sequence[int], Sequence[int]]]],
    ) -> list[np.ndarray]:
        """One forward pass over ``rows`` (token ids, longest first), right-padded; for each
        (row, (prefix, continuation)) of ``reads``, ln p of the continuation's tokens there.

        Only the logits from the first position any read needs onward are computed
        (``logits_to_keep``); their log-softmax runs on the device in float32, in chunks of at
        most :data:`LOGSOFTMAX_CHUNK` floats, and one copy per batch brings the picked values
        back."""
        torch, device = self.torch, self.device
        width = len(rows[0])
        ids = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for row, tokens in enumerate(rows):
            ids[row, : len(tokens)] = torch.tensor(tokens)
            mask[row, : len(tokens)] = 1
        first = min(len(prefix) - 1 for _, (prefix, _) in reads)  # the first position read
        keep = {"logits_to_keep": width - first} if self._keeps_logits else {}
        logits = self.model(
            input_ids=ids.to(device), attention_mask=mask.to(device), use_cache=False, **keep
        ).logits
        self.tokens_evaluated += int(mask.sum())
        self.tokens_padded += ids.numel()
        offset = width - logits.shape[1]  # the position of logits[:, 0]
        at_row: list[int] = []
        at_position: list[int] = []
        targets: list[int] = []
        for row, (prefix, continuation) in reads:
            start = len(prefix) - 1 - offset
            at_row += [row] * len(continuation)
            at_position += range(start, start + len(continuation))
            targets += continuation
        at_row_t, at_position_t, targets_t = (
            torch.tensor(values, device=device) for values in (at_row, at_position, targets)
        )
        step = max(1, LOGSOFTMAX_CHUNK // logits.shape[-1])
        picked = torch.cat(
            [
                torch.log_softmax(
                    logits[at_row_t[k : k + step], at_position_t[k : k + step]].float(), dim=-1
                ).gather(1, targets_t[k : k + step, None])[:, 0]
                for k in range(0, len(targets), step)
            ]
        )
        values = picked.double().cpu().numpy()
        counts = np.cumsum([len(continuation) for _, (_, continuation) in reads])[:-1]
        return np.split(values, counts)


@dataclass
class _Rows:
    """The samples of one chunk while they are drawn: their cache (one row per running sample,
    in the order of ``slots``) and the position every running sample's next token takes."""

    cache: Any
    slots: list[int]
    position: int


class TransformersSampler(TransformersModel):
    """``Sampler`` running a transformers model, up to ``n_seq`` samples of a prompt at a time.

    The prompt is evaluated once. Each chunk of at most ``n_seq`` samples gets a copy of its
    cache with one row per sample; every step feeds the running samples' tokens together, all at
    the same position (no padding), and a finished sample's row leaves the cache. ``n_seq`` 1
    is the same code with one row: one sample at a time. Sample k draws from its own seeded
    generator (:func:`storyflow.lm.sampling.sequence_rng`), so the same seeds give the same
    samples; batched and one-at-a-time samples are equal wherever their logits are, which the
    matrix products' shapes may move in the last bits (docs/lm.md).

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
        """Samples 0..k-1 of ``prompt``, ``n_seq`` at a time (see the class docstring)."""
        return self.sample_ids(self.prompt_tokens(prompt), k, settings)

    def sample_ids(self, ids: Sequence[int], k: int, settings: SamplingSettings) -> list[Sample]:
        """Samples 0..k-1 after the token ids ``ids`` (:meth:`sample`'s prompt, tokenized)."""
        torch = self.torch
        check_request(len(ids), settings, self.n_ctx)
        samples: list[Sample] = []
        with torch.inference_mode():
            out = self.model(
                input_ids=torch.tensor([list(ids)], device=self.device), use_cache=True
            )
            self.tokens_evaluated += len(ids)
            prompt_logits = out.logits[0, -1].float().cpu().numpy()
            for start in range(0, k, max(1, self.n_seq)):
                indices = range(start, min(k, start + max(1, self.n_seq)))
                rows = _Rows(
                    copy.deepcopy(out.past_key_values), list(range(len(indices))), len(ids)
                )
                if len(indices) > 1:
                    rows.cache.batch_repeat_interleave(len(indices))
                step = partial(self._step, rows)
                workers = torch.get_num_threads()
                samples += generate(
                    prompt_logits, indices, settings, self.decode, self.end_ids, step, workers
                )
        self.tokens_generated += sum(len(s.tokens) for s in samples)
        return samples

    def _step(self, rows: _Rows, slots: Sequence[int], tokens: Sequence[int]) -> np.ndarray:
        """Feed ``tokens[i]`` to the sample in slot ``slots[i]``; the next-token logits
        (float32), one row per slot. Rows of samples no longer running leave the cache first."""
        torch = self.torch
        if list(slots) != rows.slots:
            keep = [rows.slots.index(slot) for slot in slots]
            rows.cache.batch_select_indices(torch.tensor(keep, device=self.device))
            rows.slots = list(slots)
        out = self.model(
            input_ids=torch.tensor([[token] for token in tokens], device=self.device),
            past_key_values=rows.cache,
            position_ids=torch.full((len(tokens), 1), rows.position, device=self.device),
            use_cache=True,
        )
        rows.position += 1
        self.tokens_evaluated += len(tokens)
        return out.logits[:, -1].float().cpu().numpy()
