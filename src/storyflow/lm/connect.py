"""Open a configured model for the measures that write and answer: one object per model.

A measure names a model of the config's ``models:`` list; :func:`open_model` turns its
:class:`~storyflow.lm.specs.ModelSpec` into a :class:`LanguageModel`, whatever runs it:
llama.cpp or transformers on the local GGUF (``model_path``, materialised by the
``materialize_model`` rule), or the OpenAI-compatible HTTP client for a served model
(``source: {server: ...}``: no weights on this machine, none materialised). The object does
three things, the same way for every backend:

- :meth:`LanguageModel.render`: a prompt from messages, ending where the model's reply begins:
  the model's chat template (instruct models; read from the GGUF, or from
  ``source.server.tokenizer`` for a served model: its GGUF, Hugging Face tokenizer folder or hub
  id, :mod:`storyflow.lm.tokenizer`), the plain frame with a cue line (base models),
  or, for a served model on the chat API, the messages themselves
  (:class:`~storyflow.lm.prompts.Messages`: the server applies its own template);
- :meth:`LanguageModel.answer` / :meth:`~LanguageModel.answers`: closed-choice answers, the
  probability of each whole answer string (docs/lm.md);
- :meth:`LanguageModel.sample`: K continuations, seeded per sample.

:meth:`LanguageModel.count` counts a prompt's tokens with the model's tokenizer; a served model
without a tokenizer counts words instead (``token_unit`` says which).

The weights are loaded on first use: a job that only renders and counts (cut planning, cost
estimates) never loads them, and the context window (``n_ctx``) may be set after counting.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from storyflow import progress as job_progress
from storyflow.errors import StoryflowError
from storyflow.lm.answers import ClosedAnswer, Options
from storyflow.lm.backends import Scorer
from storyflow.lm.backends.registry import Backend, Placement, open_backend
from storyflow.lm.prompts import Messages, Prompt, check_messages, generation_prompt, prompt_tokens
from storyflow.lm.sampling import Sample, Sampler, SamplingSettings
from storyflow.lm.specs import ModelSpec
from storyflow.lm.tokenizer import Tokenizer
from storyflow.progress import Progress

log = logging.getLogger(__name__)


@dataclass
class LanguageModel:
    """One configured model, opened for rendering prompts, answering and sampling.

    ``spec``: the model; ``model_path``: its GGUF (local weights; None for a served model);
    ``n_ctx``: tokens of prompt + answer or continuation a local model holds (may be raised
    until the weights are loaded); ``n_threads``, ``n_gpu_layers``: llama.cpp's; ``n_seq``:
    samples decoded together; ``share_prefix``: the prompts of one ``answers`` call (the
    questions about one story) are evaluated as branches of their shared beginning
    (:class:`~storyflow.lm.backends.registry.Placement`, ``branches``);
    ``progress``: the job's progress file (answers and samples kept per question, so a killed
    job resumes; :mod:`storyflow.progress`), None outside a job.
    """

    spec: ModelSpec
    model_path: str | Path | None = None
    n_ctx: int = 2048
    n_threads: int = 1
    n_gpu_layers: int = 0
    n_seq: int = 1
    share_prefix: bool = False
    progress: Progress | None = None
    backend: Backend = field(init=False, repr=False)
    _answerer: Any = field(default=None, init=False, repr=False)
    _sampler: Any = field(default=None, init=False, repr=False)
    _scorers: dict[Placement, Scorer] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.backend = open_backend(self.spec, self.model_path)
        if not self.spec.served:
            self.backend.local_weights()  # a local model without weights stops here, saying so

    # --- prompts and tokens ----------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def mode(self) -> str:
        """``chat`` (the model's chat template) or ``plain`` (base models)."""
        return self.spec.prompt

    @property
    def tokenizer(self) -> Tokenizer | None:
        """The model's tokenizer (no weights; :mod:`storyflow.lm.tokenizer`), loaded on first
        use: its GGUF's for a local model; for a served model what ``source.server.tokenizer``
        names (a GGUF, a Hugging Face folder or hub id), None without one."""
        return self.backend.tokenizer()

    @property
    def vocab(self) -> Any:
        """The vocabulary the NLL planner tokenizes with (no weights; the backend's)."""
        return self.backend.vocab()

    @property
    def chat_api(self) -> bool:
        """Whether prompts go to the server as messages (its own chat template)."""
        return self.spec.served and self.spec.server.get("api") == "chat"

    @property
    def token_unit(self) -> str:
        """What :meth:`count` counts: ``tokens`` (the model's tokenizer) or ``words``."""
        return "words" if self.tokenizer is None else "tokens"

    def render(self, messages: Sequence[Mapping[str, str]], *, cue: str = "") -> Prompt:
        """The prompt of ``messages`` (system and user turns), ending where the reply begins.

        ``cue``: the last line of the plain frame of a base model (ignored in chat mode, where
        the template sets the reply's start)."""
        check_messages(messages)
        if self.chat_api:
            return Messages(tuple((m["role"], m["content"]) for m in messages))
        if self.mode == "chat":
            return generation_prompt(self.tokenizer, messages, mode="chat", model_name=self.name)
        return generation_prompt(None, messages, mode="plain", cue=cue)

    def count(self, prompt: Prompt | str) -> int:
        """Tokens of a rendered prompt or a text (the model's tokenizer; words without one)."""
        text = prompt.text if isinstance(prompt, Messages) else prompt
        if self.tokenizer is None:
            return len(text.split())
        return len(prompt_tokens(self.tokenizer, text))

    def count_text(self, text: str) -> int:
        """Tokens of a piece of story text, no special tokens (words without a tokenizer)."""
        if self.tokenizer is None:
            return len(text.split())
        return len(self.tokenizer.encode(text))

    def token_pieces(self, text: str) -> list[str]:
        """The texts of the tokens of ``text`` (no special tokens) in the model's tokenizer
        (a served model's answers read the listed first token with them)."""
        tokenizer = self.tokenizer
        assert tokenizer is not None  # asked only of a model with a tokenizer
        return [tokenizer.piece(i) for i in tokenizer.encode(text)]

    @property
    def window(self) -> int | None:
        """The context window a prompt must fit (None: the server decides)."""
        return None if self.spec.served else self.n_ctx

    def training_window(self) -> int | None:
        """The model's training context length in tokens (None when unknown)."""
        if self.tokenizer is None:
            return None
        return self.tokenizer.context_length

    # --- answers and samples ---------------------------------------------------------------------

    def placement(self, **changes: Any) -> Placement:
        """Where this model runs: its threads, GPU layers, window and samples decoded together,
        with ``changes`` (``n_ctx``, ``n_seq``, ``n_batch``, ``branches``) for one use."""
        here = Placement(
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            n_gpu_layers=self.n_gpu_layers,
            n_seq=self.n_seq,
        )
        return replace(here, **changes)

    def _open_answerer(self) -> Any:
        if self._answerer is None:
            self._answerer = self.backend.answerer(lambda: self.scorer(branches=self.share_prefix))
        return self._answerer

    def scorer(self, **changes: Any) -> Scorer:
        """The model's scorer of token log-probabilities (``tokenize``, ``start_token``,
        ``logprobs``: :class:`~storyflow.lm.backends.Scorer`), opened once per placement
        (:meth:`placement`; a use may set ``n_ctx`` and the batch, as the NLL engine sets its
        window and ``n_seq`` passes per batch). A served model scores through its server's
        prompt log-probabilities (:mod:`storyflow.lm.backends.served`)."""
        where = self.placement(**{"n_seq": 1, **changes})
        if where not in self._scorers:
            self._scorers[where] = self.backend.scorer(where)
        return self._scorers[where]

    def check_server(self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]) -> None:
        """Before a served model scores: its server reads each of ``requests`` (prefix and
        continuation token ids) as planned and returns every log-probability they need
        (:meth:`storyflow.lm.backends.served.ServedScorer.preflight`); nothing for a local
        model."""
        if not self.spec.served:
            return
        from storyflow.lm.backends.served import ServedScorer

        scorer = self.scorer()
        assert isinstance(scorer, ServedScorer)  # a served model's scorer (backends.registry)
        scorer.preflight(requests)

    def _open_sampler(self) -> Sampler:
        if self._sampler is None:
            self._sampler = self.backend.sampler(self.placement())
        return self._sampler

    def answer(self, prompt: Prompt, options: Options) -> ClosedAnswer:
        """The answer distribution over ``options`` after ``prompt`` (see storyflow.lm.answers)."""
        return self.answers([prompt], options)[0]

    def answers(self, prompts: Sequence[Prompt], options: Options) -> list[ClosedAnswer]:
        """One answer distribution per prompt, all over ``options``. In a job, answers already
        in its progress file are not asked again and new ones are stored as they come
        (:mod:`storyflow.progress`)."""
        if self.progress is None:
            return self._open_answerer().answers(list(prompts), options)
        keys = [self.progress.key(self.name, "answer", p, options) for p in prompts]
        found = [self.progress.get(k) for k in keys]
        missing = [i for i, got in enumerate(found) if got is None]
        if missing:
            # the whole call again, not its missing prompts alone: with shared prefixes an
            # answer depends on the prompts asked with it, so a resumed job asks what an
            # uninterrupted one asked and gets its answers
            asked = self._open_answerer().answers(list(prompts), options)
            for i in missing:
                self.progress.put(keys[i], asked[i])
                found[i] = asked[i]
        return cast(list[ClosedAnswer], found)  # every missing answer filled above

    def sample(self, prompt: Prompt, k: int, settings: SamplingSettings) -> list[Sample]:
        """Samples 0..k-1 of ``prompt`` (sample k seeded by ``(settings.seed, k)``).

        A server returns text without token ids: with a tokenizer, a served sample's
        ``tokens`` are its text's tokens in the model's tokenizer (so token counts of served
        and local samples compare); without one they stay empty."""
        key = None
        if self.progress is not None:
            key = self.progress.key(self.name, "sample", prompt, k, settings)
            stored = self.progress.get(key)
            if stored is not None:
                return stored
        samples = self._sample(prompt, k, settings)
        if key is not None and self.progress is not None:
            self.progress.put(key, samples)
        return samples

    def _sample(self, prompt: Prompt, k: int, settings: SamplingSettings) -> list[Sample]:
        # a Messages prompt is made only for a served model, whose sampler (HttpBackend) takes it
        samples = self._open_sampler().sample(prompt, k, settings)  # type: ignore[arg-type]
        if self.spec.served and self.tokenizer is not None:
            tokenizer = self.tokenizer
            samples = [replace(s, tokens=tuple(tokenizer.encode(s.text))) for s in samples]
        return samples

    @property
    def tokens_evaluated(self) -> int:
        """Tokens run through the model so far (answers and samples): a local model's own
        count; a served model's, the prompt and completion tokens its server reports in each
        answer's ``usage`` (0 while it reports none: the HTTP backend says so once)."""
        counted = self.backend.tokens_evaluated
        if counted is not None:
            return counted
        total = sum(scorer.tokens_evaluated for scorer in self._scorers.values())  # answers too
        if self._sampler is not None:
            total += getattr(self._sampler, "tokens_evaluated", 0)
        return total


def job_spec(settings: Mapping[str, Any], config_models: Sequence[Mapping[str, Any]]) -> ModelSpec:
    """The spec a rule's job runs: ``settings`` (the rule's params,
    :meth:`ModelSpec.scoring_settings`) completed with what never reaches params, read from the
    validated config's ``models`` entry of the same name: the labels (``family``, ``size``) and
    a served model's runtime settings (``base_url``, key variable, concurrency, timeout), so
    moving a server re-runs nothing.

    Raises:
        StoryflowError: no entry of ``config_models`` has the model's name.
    """
    name = settings["name"]
    configured = next((m for m in config_models if m["name"] == name), None)
    if configured is None:
        raise StoryflowError(
            f"model {name!r} of the rule's params is not in the config's models "
            f"({', '.join(m['name'] for m in config_models) or 'none'})"
        )
    # a job's model plays the rule's role, whatever it is
    checkpoint = settings.get("hf")
    kept = {k: v for k, v in settings.items() if k not in ("hf", "n_gpu_layers")}
    entry = {**configured, **kept, "roles": []}
    device = configured.get("device") or {}  # validated entries have it; tests' may not
    entry["device"] = {**device, "n_gpu_layers": settings.get("n_gpu_layers", 0)}
    if "source" in settings:  # served
        runtime = configured["source"]["server"]
        entry["source"] = {"server": {**runtime, **settings["source"]["server"]}}
    elif checkpoint is not None:
        entry["source"] = {"hf": dict(checkpoint)}
    else:
        entry["source"] = {"path": "(local GGUF)"}
    return ModelSpec.from_config(entry)


def job_model_spec(smk: Any, key: str = "model") -> ModelSpec:
    """The spec of the model a Snakemake job runs: its rule's ``params.<key>`` (the model's
    scoring settings) completed from the config's ``models`` (:func:`job_spec`)."""
    return job_spec(getattr(smk.params, key), smk.config["models"])


def open_job_model(smk: Any, key: str = "model", **options: Any) -> LanguageModel:
    """The model a Snakemake job runs (:func:`job_model_spec`), with its weights from the job's
    ``weights`` input (none for a served model) on the job's threads and the model's device
    (:func:`open_model`); ``options`` are :func:`open_model`'s (``n_ctx``, ...)."""
    options.setdefault("n_threads", smk.threads)
    inputs = smk.input  # Snakemake's named list (``get``), or a test's namespace
    weights = inputs.get("weights") if hasattr(inputs, "get") else getattr(inputs, "weights", None)
    return open_model(job_model_spec(smk, key), weights, **options)


def open_model(
    spec: ModelSpec,
    model_path: str | Path | None = None,
    *,
    n_ctx: int = 2048,
    n_threads: int = 1,
    n_gpu_layers: int | None = None,
    n_seq: int = 1,
    share_prefix: bool = False,
) -> LanguageModel:
    """The :class:`LanguageModel` of ``spec`` (``model_path``: its GGUF; None when served),
    on the device its ``device.n_gpu_layers`` says unless ``n_gpu_layers`` is given, keeping
    its answers in the running job's progress file, if any."""
    if n_gpu_layers is None:
        n_gpu_layers = 0 if spec.served else spec.n_gpu_layers
    return LanguageModel(
        spec,
        model_path,
        n_ctx=n_ctx,
        n_threads=n_threads,
        n_gpu_layers=n_gpu_layers,
        n_seq=n_seq,
        share_prefix=share_prefix,
        progress=job_progress.current(),
    )
