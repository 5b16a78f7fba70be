"""Which models a config key names: a list, or (null) the models with a role."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storyflow.errors import StoryflowError


def models_with_role(config: Mapping[str, Any], role: str) -> list[str]:
    """The models of ``config['models']`` whose ``roles`` include ``role``, in config order."""
    return [m["name"] for m in config["models"] if role in m["roles"]]


def role_models(
    config: Mapping[str, Any], key: str, names: Sequence[str] | None, role: str
) -> list[str]:
    """The models named by config key ``key`` (``names``), or, when it is null, the models with
    ``role``; each must be in ``models``, and a served model named for a role that scores text
    token by token (:data:`storyflow.lm.registry.SCORING_ROLES`) needs its tokenizer and the
    completions API (its prompt log-probabilities)."""
    from storyflow.lm.registry import SCORING_ROLES

    every = [m["name"] for m in config["models"]]
    chosen = models_with_role(config, role) if names is None else list(names)
    unknown = [n for n in chosen if n not in every]
    if unknown:
        raise StoryflowError(
            f"config: {key} names unknown model(s) {', '.join(unknown)}; the models are "
            f"{', '.join(every)} (or leave {key} null: the models with the role {role})"
        )
    if role in SCORING_ROLES:
        for entry in config["models"]:
            server = entry["source"].get("server")
            if entry["name"] not in chosen or server is None:
                continue
            if not server.get("tokenizer") or server.get("api") == "chat":
                raise StoryflowError(
                    f"config: {key} names the served model {entry['name']}; the role {role} "
                    "scores text token by token through the server's prompt log-probabilities: "
                    "give it source.server.tokenizer and api: completions"
                )
    return chosen
