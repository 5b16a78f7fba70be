"""The model specs: each ``models:`` entry of the config as a typed :class:`ModelSpec`.

The entry is the one the config schema has validated: its defaults (``variant`` base,
``backend`` auto, ``dtype`` float32, ``prompt`` auto, ``roles`` [sequentiality]) and its allowed
values are the schema's alone. Here ``prompt: auto`` is resolved (``chat`` for instruct models,
``plain`` for base models), ``backend: auto`` (transformers for a Hugging Face checkpoint,
``source.hf``; llama.cpp for a GGUF), a served model's ``api: null`` too, and what the schema
cannot say is checked: the roles and the prompt a served model can take, and that its
``tokenizer`` is a GGUF file or tokenizer folder on this machine or a hub id (nothing is read or
downloaded here: :mod:`storyflow.lm.tokenizer`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from storyflow.errors import StoryflowError
from storyflow.lm.tokenizer import tokenizer_source
from storyflow.settings import settings_from

#: Settings of a served model that change no answer (where and how fast it is reached): kept out
#: of :meth:`ModelSpec.scoring_settings`, so a server on another node re-runs nothing.
SERVER_RUNTIME = ("base_url", "api_key_env", "concurrency", "timeout", "retries", "backoff")


@dataclass(frozen=True)
class ModelSpec:
    """One model: its name (file names, tables), labels, how it runs and where its GGUF is.

    ``prompt`` and ``backend`` are resolved (never ``auto``); ``source`` holds exactly one of
    ``package``, ``pieces``, ``path``, ``hub`` (a GGUF, see ``storyflow.lm.weights.materialize``),
    ``hf`` (a Hugging Face checkpoint, ``storyflow.lm.weights.materialize_checkpoint``) or
    ``server``; ``device``: where its jobs run it (``n_gpu_layers``, ``threads``, ``mem_mb``: the
    schema's ``models[].device``); ``roles``: what the model is used for
    (``<measure>.<role>`` or ``sequentiality``; the roles are listed in the config schema,
    ``models[].roles``).
    """

    name: str
    source: Mapping[str, Any] = field(compare=False)
    family: str
    size: str
    variant: str
    backend: str
    dtype: str
    prompt: str
    roles: tuple[str, ...]
    device: Mapping[str, Any] = field(compare=False)

    @classmethod
    def from_config(
        cls, entry: Mapping[str, Any], scoring_roles: Collection[str] = ()
    ) -> ModelSpec:
        """The spec of one validated ``models:`` entry, ``prompt: auto`` resolved.

        ``scoring_roles``: the roles that score given text token by token (log-probabilities of
        its tokens; :func:`storyflow.plan.registry.scoring_roles`). A served model takes them
        through its completions endpoint's prompt log-probabilities
        (storyflow.lm.backends.served), planned and read with its tokenizer, so with one of them
        it needs ``source.server.tokenizer`` and the completions API."""
        where = f"models ({entry['name']})" if "name" in entry else "models"
        spec = settings_from(cls, entry, where=where)  # every key there, or an error naming it
        name, roles, mode = spec.name, spec.roles, spec.prompt
        if mode == "auto":
            mode = "chat" if spec.variant == "instruct" else "plain"
        source = dict(spec.source)
        backend = spec.backend
        if backend == "auto":
            backend = "transformers" if "hf" in source else "llama.cpp"
        if "server" in source:
            backend = "server"  # the server runs it, whatever the entry says
        if "hf" in source and backend != "transformers":
            raise StoryflowError(
                f"config: model {name!r} is a Hugging Face checkpoint (source.hf), which only "
                "the transformers backend runs: set backend: transformers (or leave it out), or "
                "give the model's GGUF (source.path or source.hub) to run it with llama.cpp"
            )
        if "server" in source:
            source["server"] = _server_settings(
                name, source["server"], mode, [r for r in roles if r in scoring_roles]
            )
        _refuse_what_does_not_apply(spec, backend)
        return replace(spec, prompt=mode, backend=backend, source=source)

    @property
    def served(self) -> bool:
        """Whether the model runs behind an OpenAI-compatible server (no local weights).

        Such a model samples and answers closed choices (docs/lm.md) and scores text token by
        token (:func:`storyflow.plan.registry.scoring_roles`) through its server's prompt
        log-probabilities.
        """
        return "server" in self.source

    @property
    def checkpoint(self) -> bool:
        """Whether the model's weights are a Hugging Face checkpoint (``source.hf``), not a GGUF."""
        return "hf" in self.source

    @property
    def n_gpu_layers(self) -> int:
        """llama.cpp's layers on the GPU (-1 all, 0 none); transformers: on the GPU if not 0."""
        return int(self.device["n_gpu_layers"])

    @property
    def on_gpu(self) -> bool:
        """Whether the model's in-process jobs run it on a GPU (never for a served model)."""
        return not self.served and self.n_gpu_layers != 0

    @property
    def server(self) -> dict[str, Any]:
        """A served model's ``source.server`` block ({} for a model with local weights)."""
        return dict(self.source.get("server") or {})

    def scoring_settings(self) -> dict[str, Any]:
        """The settings that change the model's scores (labels such as ``family`` do not).

        A rule passes these through ``params:``, so changing one re-runs that model's jobs only.
        A served model adds its server settings except :data:`SERVER_RUNTIME` (where the server
        runs and how fast it is asked); ``storyflow.lm.connect.job_spec`` reads the result
        back, with the rest of the model's config entry.
        """
        settings: dict[str, Any] = {
            "name": self.name,
            "variant": self.variant,
            "prompt": self.prompt,
            "backend": self.backend,
            "dtype": self.dtype,
        }
        if self.served:
            kept = {k: v for k, v in self.server.items() if k not in SERVER_RUNTIME}
            settings["source"] = {"server": kept}
        if self.checkpoint:  # another checkpoint or revision is another model
            settings["hf"] = dict(self.source["hf"])
        if self.on_gpu:  # GPU scores differ from CPU scores in their last digits
            settings["n_gpu_layers"] = self.n_gpu_layers
        return settings

    @classmethod
    def local(
        cls,
        name: str,
        *,
        prompt: str = "plain",
        backend: str = "llama.cpp",
        dtype: str = "float32",
        n_gpu_layers: int = 0,
    ) -> ModelSpec:
        """A model with local weights outside any config (benchmarks, tools, tests): its
        weights are given to :func:`storyflow.lm.connect.open_model`; ``prompt`` ``plain`` or
        ``chat``, ``backend`` a registered one (``llama.cpp``, ``transformers``)."""
        return cls(
            name=name,
            source={"path": "(given to open_model)"},
            family="",
            size="",
            variant="instruct" if prompt == "chat" else "base",
            backend=backend,
            dtype=dtype,
            prompt=prompt,
            roles=(),  # no config: nothing chooses it for a role
            device={"n_gpu_layers": n_gpu_layers, "threads": None, "mem_mb": None},
        )


#: The precision the schema gives every model (``models[].dtype``'s default): the only value a
#: model that transformers does not run may have.
DEFAULT_DTYPE = "float32"


def _refuse_what_does_not_apply(spec: ModelSpec, backend: str) -> None:
    """Stop on a setting that the model's source or backend does not use (``backend`` is the
    resolved one): ``dtype`` other than the default on a model llama.cpp or a server runs, and
    a ``backend`` or a GPU given to a served model. Such a setting would change nothing but the
    rules' params (so re-run the model's jobs) and the provenance table's record of the model:
    storyflow refuses it rather than ignore it (docs/lm.md, "Settings that do not apply")."""
    where = f"config: model {spec.name!r}"
    if spec.dtype != DEFAULT_DTYPE and backend != "transformers":
        runs = (
            "its server decides the precision"
            if backend == "server"
            else "llama.cpp runs the GGUF as it is quantized; dtype is the transformers backend's"
        )
        fix = (
            ""
            if backend == "server"
            else (f", or set backend: transformers to run the GGUF dequantized to {spec.dtype}")
        )
        raise StoryflowError(
            f"{where}: dtype {spec.dtype} does not apply: {runs}, so it would change nothing "
            f"but the record of the run. Remove dtype{fix}"
        )
    if backend != "server":
        return
    if spec.backend in ("llama.cpp", "transformers"):
        raise StoryflowError(
            f"{where}: backend {spec.backend} does not apply: the model is served "
            "(source.server), and its server runs it. Remove backend, or give the model local "
            "weights (source.path, hub or hf) to run it with that backend"
        )
    if int(spec.device.get("n_gpu_layers") or 0) != 0:
        raise StoryflowError(
            f"{where}: device.n_gpu_layers {spec.device['n_gpu_layers']} does not apply: the "
            "model is served (source.server), and its server decides where it runs (start it "
            "on a GPU node: docs/cluster.md). Remove device.n_gpu_layers"
        )


def _server_settings(
    name: str, given: Mapping[str, Any], mode: str, scoring: Sequence[str]
) -> dict[str, Any]:
    """A served model's ``source.server`` with ``api: null`` resolved (completions when
    storyflow can render the prompt: a plain one, or a tokenizer to apply the chat template;
    else chat), checked against its prompt ``mode`` and the ``scoring`` roles it takes (they
    need the tokenizer and the completions API); a wrong tokenizer path stops here."""
    server = dict(given)
    if server["tokenizer"]:  # a wrong path stops here, before any job
        tokenizer_source(
            str(server["tokenizer"]), f"config: model {name!r}: source.server.tokenizer"
        )
    if server["api"] is None:  # auto: text when storyflow can render the prompt
        can_render = mode == "plain" or bool(server["tokenizer"])
        server["api"] = "completions" if can_render else "chat"
    scoring_roles = ", ".join(scoring)
    if scoring_roles and not server["tokenizer"]:
        raise StoryflowError(
            f"config: model {name!r} is served and takes the role(s) {scoring_roles}, which "
            "score text token by token, planned and read with the model's tokenizer: "
            "set source.server.tokenizer (its GGUF, Hugging Face folder or hub id)"
        )
    if scoring_roles and server["api"] == "chat":
        raise StoryflowError(
            f"config: model {name!r} takes the role(s) {scoring_roles}, which need the "
            "completions API's prompt log-probabilities: use api: completions"
        )
    if server["api"] == "chat" and mode != "chat":
        raise StoryflowError(
            f"config: model {name!r}: api chat sends messages to the server's chat "
            "template, so the model's prompt must be chat (variant instruct, or prompt: "
            "chat); use api: completions for a base model"
        )
    if server["api"] == "completions" and mode == "chat" and not server["tokenizer"]:
        raise StoryflowError(
            f"config: model {name!r}: its prompts use a chat template, which storyflow "
            "renders itself for the completions API: set source.server.tokenizer to the "
            "model's Hugging Face tokenizer folder or hub id (org/name), or its GGUF file "
            "(its template and vocabulary are read, no weights), or use api: chat"
        )
    return server


def weight_models(specs: Mapping[str, ModelSpec]) -> list[str]:
    """The models with local weights (a GGUF or a checkpoint), in config order: those the NLL
    engine scores."""
    return [name for name, spec in specs.items() if not spec.served]


def model_specs(
    entries: Sequence[Mapping[str, Any]], scoring_roles: Collection[str] = ()
) -> dict[str, ModelSpec]:
    """The config's ``models:`` list as specs by name (names must be unique; ``scoring_roles``:
    :meth:`ModelSpec.from_config`'s)."""
    from storyflow.path_names import check_path_name

    specs: dict[str, ModelSpec] = {}
    for i, entry in enumerate(entries):
        if "name" in entry:
            check_path_name(str(entry["name"]), f"models[{i}].name", "resources/models/<name>.gguf")
        spec = ModelSpec.from_config(entry, scoring_roles)
        if spec.name in specs:
            raise StoryflowError(f"config: model name {spec.name!r} is used twice in `models`")
        specs[spec.name] = spec
    return specs
