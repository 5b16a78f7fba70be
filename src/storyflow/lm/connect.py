"""Open a configured model for the measures that write and answer: one call per capability.

A measure names a model of the config's ``models:`` list; :func:`open_sampler` and
:func:`open_answerer` turn its :class:`~storyflow.lm.registry.ModelSpec` into the backend that
runs it: llama.cpp or transformers on the local GGUF (``model_path``, materialised by the
``materialize_model`` rule), or the OpenAI-compatible HTTP client for a served model. The
returned objects share one interface whatever the backend:

- a :class:`~storyflow.lm.sampling.Sampler`: ``sample(prompt, k, settings) -> list[Sample]``;
- an :class:`Answerer`: ``answer(prompt, options) -> ClosedAnswer`` (probabilities of whole
  answer strings, docs/lm.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from storyflow.errors import StoryflowError
from storyflow.lm.answers import ClosedAnswer, Options, answer
from storyflow.lm.backends import Scorer
from storyflow.lm.registry import ModelSpec
from storyflow.lm.sampling import Sampler

if TYPE_CHECKING:
    pass


class Answerer(Protocol):
    """A model that answers closed-choice questions."""

    def answer(self, prompt: Sequence[int] | str, options: Options) -> ClosedAnswer:
        """The probability of each option (whole answer string) after ``prompt``."""
        ...


@dataclass
class ScorerAnswerer:
    """Closed-choice answers from an in-process scorer (llama.cpp or transformers)."""

    scorer: Scorer

    def answer(self, prompt: Sequence[int] | str, options: Options) -> ClosedAnswer:
        return answer(self.scorer, prompt, options)


def _server(spec: ModelSpec):
    from storyflow.lm.backends.http import HttpBackend

    server = spec.source["server"]
    return HttpBackend(server["base_url"], server["model"], server.get("api_key_env"))


def _weights(spec: ModelSpec, model_path: str | Path | None) -> Path:
    if model_path is None:
        raise StoryflowError(
            f"model {spec.name!r} runs locally: give its GGUF (resources/models/{spec.name}.gguf)"
        )
    return Path(model_path)


def open_sampler(
    spec: ModelSpec,
    model_path: str | Path | None = None,
    *,
    n_ctx: int = 2048,
    n_seq: int = 1,
    n_threads: int = 1,
    n_gpu_layers: int = 0,
) -> Sampler:
    """The sampler of ``spec``: K continuations per prompt, seeded per sample (docs/lm.md).

    ``n_ctx``: tokens of prompt + continuation per sequence; ``n_seq``: sequences decoded in
    one llama.cpp batch (a GPU takes 16 and more; on a CPU batching saves little).
    """
    if spec.served:
        return _server(spec)
    path = _weights(spec, model_path)
    if spec.backend == "transformers":
        from storyflow.lm.backends.transformers import TransformersSampler

        device = "cuda" if n_gpu_layers != 0 else "cpu"
        return TransformersSampler(path, dtype=spec.dtype, device=device, n_threads=n_threads)
    from storyflow.lm.backends.llama_cpp_sampler import LlamaCppSampler

    return LlamaCppSampler(
        path, n_ctx=n_ctx, n_seq=n_seq, n_threads=n_threads, n_gpu_layers=n_gpu_layers
    )


def open_answerer(
    spec: ModelSpec,
    model_path: str | Path | None = None,
    *,
    n_ctx: int = 2048,
    n_threads: int = 1,
    n_gpu_layers: int = 0,
    share_prefix: bool = False,
) -> Answerer:
    """The closed-choice answerer of ``spec`` (``n_ctx``: tokens of prompt + longest option).

    ``share_prefix``: llama.cpp evaluates only what a prompt adds to the previous prompt's
    common beginning (many questions after one story; docs/lm.md, "Shared prefixes").
    """
    if spec.served:
        return _server(spec)
    path = _weights(spec, model_path)
    if spec.backend == "transformers":
        from storyflow.lm.backends.transformers import TransformersScorer

        device = "cuda" if n_gpu_layers != 0 else "cpu"
        return ScorerAnswerer(
            TransformersScorer(path, dtype=spec.dtype, device=device, n_threads=n_threads)
        )
    from storyflow.lm.backends.llama_cpp import LlamaCppScorer

    return ScorerAnswerer(
        LlamaCppScorer(
            path,
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_gpu_layers=n_gpu_layers,
            share_prefix=share_prefix,
        )
    )
