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


@dataclass(frozen=True)
class ModelSpec:
    """One model: its name (file names, tables), labels, how it runs and where its GGUF is.

    ``prompt`` is resolved (``chat`` or ``plain``, never ``auto``); ``source`` holds exactly one
    of ``package``, ``path`` or ``hub`` (see ``storyflow.lm.models.materialize``).
    """

    name: str
    source: Mapping[str, Any] = field(compare=False)
    family: str = ""
    size: str = ""
    variant: str = "base"
    backend: str = "llama.cpp"
    dtype: str = "float32"
    prompt: str = "plain"

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
        return cls(
            name=name,
            source=dict(entry.get("source") or {}),
            family=str(entry.get("family") or ""),
            size=str(entry.get("size") or ""),
            variant=variant,
            backend=entry.get("backend") or "llama.cpp",
            dtype=entry.get("dtype") or "float32",
            prompt=mode,
        )

    @property
    def served(self) -> bool:
        """Whether the model runs behind an OpenAI-compatible server (no local weights).

        Such a model samples and answers closed choices (docs/lm.md) but has no GGUF to score
        NLLs with: the sequentiality analysis leaves it out.
        """
        return "server" in self.source

    def scoring_settings(self) -> dict[str, str]:
        """The settings that change the model's scores (labels such as ``family`` do not).

        A rule passes these through ``params:``, so changing one re-runs that model's jobs only.
        """
        return {
            "name": self.name,
            "variant": self.variant,
            "prompt": self.prompt,
            "backend": self.backend,
            "dtype": self.dtype,
        }


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
