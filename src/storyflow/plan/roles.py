"""The roles a measure gives models, and which models a config key names for a role.

A role is one use of a model by a measure (``models[].roles`` in the config schema). Each
measure declares its roles once, as the ``ROLES`` of its planning module (its registry record,
:attr:`storyflow.plan.registry.Measure.roles`, reads them there); everything that lists roles
derives from those records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from storyflow.errors import StoryflowError


@dataclass(frozen=True)
class Role:
    """One use of a model by a measure.

    ``name``: its value in ``models[].roles`` (``<measure>.<role>``; the measure's own name for
    sequentiality, whose one role is to score NLLs); ``key``: the config path that names the
    role's models (a list or one name; null there = every model with the role), or None where
    the models with the role are the role's models; ``scores_text``: the role reads the token
    log-probabilities of given text, so a served model takes it only with its tokenizer and the
    completions API (docs/lm.md, "Served models").
    """

    name: str
    key: tuple[str, ...] | None = None
    scores_text: bool = False

    @property
    def setting(self) -> str:
        """``key`` as the dotted config key messages name (``tension.forecasters``)."""
        return ".".join(self.key) if self.key else "models[].roles"

    def named(self, config: Mapping[str, Any]) -> list[str] | None:
        """The model names ``key`` gives (a single name as a list), or None: the models with
        the role."""
        if self.key is None:
            return None
        value: Any = config
        for part in self.key:
            value = value[part]
        if value is None or isinstance(value, str):
            return None if value is None else [value]
        return list(value)

    def models(self, config: Mapping[str, Any]) -> list[str]:
        """The role's models (:func:`role_models` of ``key``'s names)."""
        return role_models(config, self.setting, self.named(config), self)


def models_with_role(config: Mapping[str, Any], role: Role) -> list[str]:
    """The models of ``config['models']`` whose ``roles`` include ``role``, in config order."""
    return [m["name"] for m in config["models"] if role.name in m["roles"]]


def role_models(
    config: Mapping[str, Any], key: str, names: Sequence[str] | None, role: Role
) -> list[str]:
    """The models named by config key ``key`` (``names``), or, when it is null, the models with
    ``role``; each must be in ``models``, and a served model chosen for a role that scores text
    (:attr:`Role.scores_text`) needs its tokenizer and the completions API (its prompt
    log-probabilities)."""
    every = [m["name"] for m in config["models"]]
    chosen = models_with_role(config, role) if names is None else list(names)
    unknown = [n for n in chosen if n not in every]
    if unknown:
        raise StoryflowError(
            f"config: {key} names unknown model(s) {', '.join(unknown)}; the models are "
            f"{', '.join(every)} (or leave {key} null: the models with the role {role.name})"
        )
    if role.scores_text:
        for entry in config["models"]:
            server = entry["source"].get("server")
            if entry["name"] not in chosen or server is None:
                continue
            if not server.get("tokenizer") or server.get("api") == "chat":
                raise StoryflowError(
                    f"config: {key} names the served model {entry['name']}; the role "
                    f"{role.name} scores text token by token through the server's prompt "
                    "log-probabilities: give it source.server.tokenizer and api: completions"
                )
    return chosen
