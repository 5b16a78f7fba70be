"""Backends registered by name: what runs a model's weights, or reaches its server.

A model's spec names its backend (``ModelSpec.backend``: the config's ``models[].backend``
resolved, ``server`` for a served model). :func:`open_backend` builds the class registered under
that name for one model (its spec and weights), and everything that uses the model goes through
it: the NLL engine, the surprisal baseline, and every measure's role through
:class:`storyflow.lm.connect.LanguageModel`. No other module chooses a backend.

Each backend gives what the measures ask of a model:

- :meth:`Backend.tokenizer`: the model's tokenizer and chat template (no weights);
- :meth:`Backend.vocab`: the same vocabulary as the NLL planner reads it (``tokenize``,
  ``text``, ``start_token``, ``n_ctx_train``; no weights);
- :meth:`Backend.scorer`: log-probabilities of given token sequences (the
  :class:`~storyflow.lm.backends.Scorer` protocol), the NLL engine's passes included;
- :meth:`Backend.sampler`: K sampled continuations of a prompt;
- :meth:`Backend.answerer`: closed-choice answers (by default read from the scorer).

Where a backend runs (threads, GPU layers, window, batch) is a :class:`Placement`, given per
call, so one model's roles can open it with the window and batch each needs. A new backend is
one class here with :func:`register`; the config schema's ``models[].backend`` enum lists the
names a user may write (a test keeps the two equal).
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from storyflow.errors import StoryflowError

if TYPE_CHECKING:
    from storyflow.lm.backends import Scorer
    from storyflow.lm.sampling import Sampler
    from storyflow.lm.specs import ModelSpec
    from storyflow.lm.tokenizer import Tokenizer

#: Prompts branched from one shared beginning per ``llama_decode`` (``Placement.branches``):
#: more than the questions a reader asks about one story version. A constant, not a setting:
#: it decides which prompts share a batch, and so (for models whose kernels depend on the
#: batch) the last digits of their answers.
BRANCHES = 16


@dataclass(frozen=True)
class Placement:
    """Where and how a backend runs a model for one use.

    ``n_ctx``: tokens the context window holds (llama.cpp allocates it; transformers and a
    server ignore it); ``n_threads``: CPU threads; ``n_gpu_layers``: llama.cpp's layers on the
    GPU (-1 all, 0 none), for transformers on CUDA when not 0; ``n_seq``: sequences scored
    together (rows of one batch; 1 = one pass at a time); ``n_batch``: tokens per llama.cpp
    decode call, or padded tokens per transformers batch (None: the device's default,
    :func:`~storyflow.lm.backends.llama_cpp.default_n_batch`); ``branches``: closed-choice
    prompts about one text evaluated together: on llama.cpp as branches of their shared
    beginning, :data:`BRANCHES` per call (docs/lm.md, "Shared prefixes"); on transformers as
    rows of padded batches of at most :data:`BRANCHES` prompts and ``n_batch`` tokens.
    """

    n_ctx: int = 2048
    n_threads: int = 1
    n_gpu_layers: int = 0
    n_seq: int = 1
    n_batch: int | None = None
    branches: bool = False

    @property
    def device(self) -> str:
        """The torch device of this placement: ``cuda`` when offloaded, else ``cpu``."""
        return "cuda" if self.n_gpu_layers != 0 else "cpu"


class Backend(ABC):
    """One model opened by one engine (module docstring); built by :func:`open_backend`.

    ``spec``: the model; ``weights``: its local weights (a GGUF, or a checkpoint's manifest
    written by rule ``materialize_checkpoint``; None for a served model)."""

    #: The name a spec's ``backend`` gives (set by :func:`register`).
    name: ClassVar[str]
    #: Whether the NLL engine packs a shard's passes of several stories into its batches when
    #: ``nll.n_seq`` > 1 (``storyflow.lm.nll.packing``), instead of sending one story's at a
    #: time: a backend that evaluates any rows together at no cost per distinct prefix.
    packs_stories: ClassVar[bool] = False

    def __init__(self, spec: ModelSpec, weights: str | Path | None) -> None:
        self.spec = spec
        self.weights = weights

    @abstractmethod
    def tokenizer(self) -> Tokenizer | None:
        """The model's tokenizer (None: a served model with no ``source.server.tokenizer``)."""

    @abstractmethod
    def vocab(self) -> Any:
        """The vocabulary the NLL planner tokenizes with (loads no weights)."""

    @abstractmethod
    def scorer(self, placement: Placement) -> Scorer:
        """A scorer of token log-probabilities, placed as ``placement`` says."""

    @abstractmethod
    def sampler(self, placement: Placement) -> Sampler:
        """A sampler of continuations, placed as ``placement`` says."""

    def answerer(self, scorer: Callable[[], Scorer]) -> Any:
        """Closed-choice answers: the probability of each whole answer string, read from the
        model's scorer (:func:`storyflow.lm.answers.answers`); ``scorer`` opens it (the model's
        own, so a job that answers and scores text holds its weights once)."""
        from storyflow.lm.answers import ScorerAnswerer

        return ScorerAnswerer(scorer())

    @property
    def tokens_evaluated(self) -> int | None:
        """Tokens the backend counted itself (a server's ``usage``), None when its scorers and
        samplers count theirs."""
        return None

    def placed(self, placement: Placement) -> Placement:
        """``placement``, once this node is found able to run it: a GPU asked for
        (``n_gpu_layers`` not 0) must be there for this backend
        (:func:`storyflow.lm.backends.device.require_gpu`), checked before any weights load."""
        if placement.n_gpu_layers != 0:
            from storyflow.lm.backends.device import require_gpu

            require_gpu(self.spec.name, placement.n_gpu_layers, self.name)
        return placement

    def local_weights(self) -> str | Path:
        if self.weights is None:
            raise StoryflowError(
                f"model {self.spec.name!r} runs locally: give its weights (its GGUF, "
                f"resources/models/{self.spec.name}.gguf, or its checkpoint's manifest, "
                f"resources/models/{self.spec.name}.checkpoint.json)"
            )
        return self.weights


#: The registered backends by name (:func:`register`).
BACKENDS: dict[str, type[Backend]] = {}


def register(name: str) -> Callable[[type[Backend]], type[Backend]]:
    """Class decorator: register a :class:`Backend` under ``name`` (once)."""

    def add(cls: type[Backend]) -> type[Backend]:
        if name in BACKENDS:
            raise ValueError(f"backend {name!r} is registered twice")
        cls.name = name
        BACKENDS[name] = cls
        return cls

    return add


def open_backend(spec: ModelSpec, weights: str | Path | None = None) -> Backend:
    """The backend ``spec.backend`` names, opened for ``spec`` and its ``weights``."""
    try:
        cls = BACKENDS[spec.backend]
    except KeyError:
        raise StoryflowError(
            f"model {spec.name!r}: no backend {spec.backend!r} (registered: "
            f"{', '.join(sorted(BACKENDS))})"
        ) from None
    return cls(spec, weights)


@register("llama.cpp")
class LlamaCpp(Backend):
    """llama.cpp in process, on the GGUF as quantized."""

    @functools.cache  # noqa: B019 (one vocabulary per opened model)
    def vocab(self) -> Any:
        from storyflow.lm.backends.llama_cpp import VocabOnly

        return VocabOnly(self.local_weights())

    def tokenizer(self) -> Tokenizer:
        from storyflow.lm.tokenizer import GgufTokenizer

        return GgufTokenizer(self.vocab().llm, str(self.local_weights()))

    def scorer(self, placement: Placement) -> Scorer:
        from storyflow.lm.backends.llama_cpp import LlamaCppScorer, default_n_batch

        gpu = self.placed(placement).n_gpu_layers
        if placement.branches or placement.n_seq > 1:
            from storyflow.lm.backends.batched import BatchedLlamaCppScorer

            return BatchedLlamaCppScorer(
                self.local_weights(),
                n_ctx=placement.n_ctx,
                n_seq=BRANCHES if placement.branches else placement.n_seq,
                n_batch=default_n_batch(gpu, placement.n_batch),
                n_threads=placement.n_threads,
                n_gpu_layers=gpu,
                branches=placement.branches,
            )
        options: dict[str, Any] = (
            {} if placement.n_batch is None else {"n_batch": placement.n_batch}
        )
        return LlamaCppScorer(
            self.local_weights(),
            n_ctx=placement.n_ctx,
            n_threads=placement.n_threads,
            n_gpu_layers=gpu,
            **options,
        )

    def sampler(self, placement: Placement) -> Sampler:
        from storyflow.lm.backends.llama_cpp_sampler import LlamaCppSampler

        self.placed(placement)
        return LlamaCppSampler(
            self.local_weights(),
            n_ctx=placement.n_ctx,
            n_seq=placement.n_seq,
            n_threads=placement.n_threads,
            n_gpu_layers=placement.n_gpu_layers,
        )


@register("transformers")
class Transformers(Backend):
    """PyTorch through transformers: a Hugging Face checkpoint (its manifest, ``.json``) in the
    spec's ``dtype``, or a GGUF dequantized.

    Its batches are padded rows with no cache (:meth:`TransformersScorer.padded`), so the NLL
    engine packs passes of several stories into them (``packs_stories``); llama.cpp's batches
    keep each pass's stem in a KV stream and one story at a time, so they do not."""

    packs_stories = True

    def _checkpoint(self) -> bool:
        return Path(self.local_weights()).suffix == ".json"

    @functools.cache  # noqa: B019 (one tokenizer per opened model)
    def tokenizer(self) -> Tokenizer:
        from storyflow.lm.tokenizer import GgufTokenizer, HfTokenizer

        if self._checkpoint():
            from storyflow.lm.weights import checkpoint

            return HfTokenizer(checkpoint(self.local_weights()).folder)
        return GgufTokenizer.load(self.local_weights())

    @functools.cache  # noqa: B019
    def vocab(self) -> Any:
        from storyflow.lm.backends.llama_cpp import VocabOnly
        from storyflow.lm.tokenizer import TokenizerVocab

        if self._checkpoint():
            return TokenizerVocab(self.tokenizer())
        return VocabOnly(self.local_weights())

    def _options(self, placement: Placement) -> dict[str, Any]:
        return {
            "dtype": self.spec.dtype,
            "device": self.placed(placement).device,
            "n_threads": placement.n_threads,
            "vocab": self.vocab(),
        }

    def scorer(self, placement: Placement) -> Scorer:
        from storyflow.lm.backends.llama_cpp import default_n_batch
        from storyflow.lm.backends.transformers import TransformersScorer

        batch = default_n_batch(placement.n_gpu_layers, placement.n_batch)
        rows = BRANCHES if placement.branches else placement.n_seq  # answers asked together
        return TransformersScorer(
            self.local_weights(), n_seq=rows, n_batch=batch, **self._options(placement)
        )

    def sampler(self, placement: Placement) -> Sampler:
        from storyflow.lm.backends.transformers import TransformersSampler

        return TransformersSampler(
            self.local_weights(), n_seq=placement.n_seq, **self._options(placement)
        )


@register("server")
class Server(Backend):
    """An OpenAI-compatible server (``source.server``): no weights here. One HTTP client per
    model serves its answers, samples and prompt log-probabilities, and counts the tokens the
    server reports."""

    def __init__(self, spec: ModelSpec, weights: str | Path | None) -> None:
        super().__init__(spec, None)
        from storyflow.lm.backends.http import HttpBackend

        server = spec.server  # validated: every key there, defaults filled by the config schema
        pieces = functools.cache(self._pieces) if server.get("tokenizer") else None
        self.http = HttpBackend(
            server["base_url"],
            server["model"],
            server["api_key_env"],
            server["timeout"],
            concurrency=server["concurrency"],
            extra_body=dict(server["extra_body"]),
            api=server["api"],
            answers=server["answers"],
            top_logprobs=server["top_logprobs"],
            pieces=pieces,
            retries=server["retries"],
            backoff=server["backoff"],
        )

    def _pieces(self, text: str) -> list[str]:
        tokenizer = self.tokenizer()
        assert tokenizer is not None  # asked only when source.server names a tokenizer
        return [tokenizer.piece(i) for i in tokenizer.encode(text)]

    @functools.cache  # noqa: B019
    def tokenizer(self) -> Tokenizer | None:
        from storyflow.lm.tokenizer import open_tokenizer

        source = self.spec.server.get("tokenizer")
        if not source:
            return None
        return open_tokenizer(str(source), f"model {self.spec.name!r}: source.server.tokenizer")

    @functools.cache  # noqa: B019
    def vocab(self) -> Any:
        from storyflow.lm.backends.llama_cpp import VocabOnly
        from storyflow.lm.tokenizer import GgufTokenizer, TokenizerVocab

        tokenizer = self.tokenizer()
        if isinstance(tokenizer, GgufTokenizer):  # as for a local GGUF
            return VocabOnly(tokenizer.source)
        if tokenizer is None:
            raise StoryflowError(
                f"model {self.spec.name!r} is served without a tokenizer: scoring token "
                "log-probabilities needs source.server.tokenizer (its GGUF, Hugging Face "
                "folder or hub id)"
            )
        return TokenizerVocab(tokenizer)

    def scorer(self, placement: Placement) -> Scorer:
        from storyflow.lm.backends.served import ServedScorer

        return ServedScorer(self.http, self.vocab())

    def sampler(self, placement: Placement) -> Sampler:
        return self.http

    def answerer(self, scorer: Callable[[], Scorer]) -> Any:
        return self.http  # the server answers closed choices itself

    @property
    def tokens_evaluated(self) -> int:
        return self.http.tokens_evaluated
