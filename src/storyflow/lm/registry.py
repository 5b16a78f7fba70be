"""The model registry: each ``models:`` entry of the config as a typed :class:`ModelSpec`.

Defaults are applied here, once (the config schema fills the same values; a spec built from a
bare mapping, in a test or a notebook, gets them too): ``variant`` base, ``backend`` llama.cpp,
``dtype`` float32, ``prompt`` auto, which resolves to ``chat`` for instruct models and ``plain``
for base models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storyflow.errors import StoryflowError

VARIANTS = ("base", "instruct")
BACKENDS = ("llama.cpp", "transformers")
DTYPES = ("float32", "bfloat16")
PROMPT_MODES = ("auto", "chat", "plain")

#: What a model can be used for (``models[].roles``): ``<measure>.<role>``, or ``sequentiality``
#: (NLL scoring). A measure's model list in the config (``tension.forecasters`` ...) defaults to
#: the models with its role, so the model list carries the whole assignment.
ROLES = (
    "sequentiality",
    "tension.forecaster",
    "tension.judge",
    "tension.pmi",
    "fabula_entropy.reader",
    "plot_holes.detector",
    "plot_holes.surprisal",
    "plot_holes.maker",
    "plot_holes.nli",
)
#: Roles that score text token by token with the model's weights: no served model takes them.
LOCAL_ROLES = ("sequentiality", "tension.pmi", "plot_holes.surprisal")
#: Settings of a served model that change no answer (where and how fast it is reached): kept out
#: of :meth:`ModelSpec.scoring_settings`, so a server on another node re-runs nothing.
SERVER_RUNTIME = ("base_url", "api_key_env", "concurrency", "timeout", "retries", "backoff")


@dataclass(frozen=True)
class ModelSpec:
    """One model: its name (file names, tables), labels, how it runs and where its GGUF is.

    ``prompt`` is resolved (``chat`` or ``plain``, never ``auto``); ``source`` holds exactly one
    of ``package``, ``pieces``, ``path``, ``hub`` (local weights, see
    ``storyflow.lm.models.materialize``) or ``server``; ``roles``: what the model is used for
    (:data:`ROLES`).
    """

    name: str
    source: Mapping[str, Any] = field(compare=False)
    family: str = ""
    size: str = ""
    variant: str = "base"
    backend: str = "llama.cpp"
    dtype: str = "float32"
    prompt: str = "plain"
    roles: tuple[str, ...] = ("sequentiality",)

    @classmethod
    def from_config(cls, entry: Mapping[str, Any]) -> ModelSpec:
        """The spec of one ``models:`` entry, defaults applied and ``prompt: auto`` resolved."""
        name = str(entry.get("name", ""))
        variant = entry.get("variant") or "base"
        mode = entry.get("prompt") or "auto"
        for key, value, allowed in (
            ("variant", variant, VARIANTS),
            ("backend", entry.get("backend") or "llama.cpp", BACKENDS),
            ("dtype", entry.get("dtype") or "float32", DTYPES),
            ("prompt", mode, PROMPT_MODES),
        ):
            if value not in allowed:
                raise StoryflowError(
                    f"config: model {name!r}: {key} must be one of {', '.join(allowed)}, "
                    f"not {value!r}"
                )
        if mode == "auto":
            mode = "chat" if variant == "instruct" else "plain"
        roles = tuple(entry.get("roles", ("sequentiality",)))
        unknown = [r for r in roles if r not in ROLES]
        if unknown:
            raise StoryflowError(
                f"config: model {name!r}: unknown role(s) {', '.join(unknown)}; the roles are "
                f"{', '.join(ROLES)}"
            )
        source = dict(entry.get("source") or {})
        if "server" in source:
            local = [r for r in roles if r in LOCAL_ROLES]
            if local:
                raise StoryflowError(
                    f"config: model {name!r} is served (source.server), so it cannot take the "
                    f"role(s) {', '.join(local)}, which score text with local weights; give it "
                    "other roles (models[].roles), e.g. [fabula_entropy.reader]"
                )
            server = source["server"] = dict(source["server"])
            if server.get("api") is None:  # auto: text when storyflow can render the prompt
                can_render = mode == "plain" or bool(server.get("tokenizer"))
                server["api"] = "completions" if can_render else "chat"
            if server["api"] == "chat" and mode != "chat":
                raise StoryflowError(
                    f"config: model {name!r}: api chat sends messages to the server's chat "
                    "template, so the model's prompt must be chat (variant instruct, or prompt: "
                    "chat); use api: completions for a base model"
                )
            if server["api"] == "completions" and mode == "chat" and not server.get("tokenizer"):
                raise StoryflowError(
                    f"config: model {name!r}: its prompts use a chat template, which storyflow "
                    "renders itself for the completions API: set source.server.tokenizer to the "
                    "model's GGUF file (its template and vocabulary are read, no weights), or "
                    "use api: chat"
                )
        return cls(
            name=name,
            source=source,
            family=str(entry.get("family") or ""),
            size=str(entry.get("size") or ""),
            variant=variant,
            backend=entry.get("backend") or "llama.cpp",
            dtype=entry.get("dtype") or "float32",
            prompt=mode,
            roles=roles,
        )

    @property
    def served(self) -> bool:
        """Whether the model runs behind an OpenAI-compatible server (no local weights).

        Such a model samples and answers closed choices (docs/lm.md) but has no GGUF to score
        NLLs with: the sequentiality analysis leaves it out.
        """
        return "server" in self.source

    @property
    def server(self) -> dict[str, Any]:
        """A served model's ``source.server`` block ({} for a model with local weights)."""
        return dict(self.source.get("server") or {})

    def scoring_settings(self) -> dict[str, Any]:
        """The settings that change the model's scores (labels such as ``family`` do not).

        A rule passes these through ``params:``, so changing one re-runs that model's jobs only.
        A served model adds its server settings except :data:`SERVER_RUNTIME` (where the server
        runs and how fast it is asked); :meth:`from_config` reads the result back.
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
        return settings

    def has_role(self, role: str) -> bool:
        """Whether ``role`` (one of :data:`ROLES`) is among the model's ``roles``."""
        return role in self.roles


def models_with_role(specs: Mapping[str, ModelSpec], role: str) -> list[str]:
    """The models whose ``roles`` include ``role``, in config order."""
    return [name for name, spec in specs.items() if spec.has_role(role)]


def weight_models(specs: Mapping[str, ModelSpec]) -> list[str]:
    """The models with local weights (a GGUF), in config order: those the NLL engine scores."""
    return [name for name, spec in specs.items() if not spec.served]


def model_specs(entries: Sequence[Mapping[str, Any]]) -> dict[str, ModelSpec]:
    """The config's ``models:`` list as specs by name (names must be unique)."""
    specs: dict[str, ModelSpec] = {}
    for entry in entries:
        spec = ModelSpec.from_config(entry)
        if spec.name in specs:
            raise StoryflowError(f"config: model name {spec.name!r} is used twice in `models`")
        specs[spec.name] = spec
    return specs
