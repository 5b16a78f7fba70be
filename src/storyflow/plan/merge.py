"""How the config files merge: either/or keys and model lists that a later file replaces.

Snakemake merges config files key by key; these functions undo the two merges a researcher would
not expect (storyflow.plan's callers pass the sources in Snakemake's order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import storyflow.plan.registry as registry
import storyflow.plan.sequentiality as sequentiality
from storyflow.errors import StoryflowError


def _block(config: Mapping[str, Any] | None, path: tuple[str, ...]) -> Mapping[str, Any]:
    for key in path:
        config = (config or {}).get(key) if isinstance(config, Mapping) else None
    return config if isinstance(config, Mapping) else {}


#: Keys of which a config sets one: (the block holding them, the alternatives).
ALTERNATIVES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("hippocorpus", "sample"), ("fraction", "per_type")),
)


def resolve_alternatives(
    config: dict[str, Any], sources: Sequence[Mapping[str, Any] | None]
) -> dict[str, Any]:
    """Let a later config replace an either/or choice of an earlier one.

    Snakemake merges config files key by key, so a user file setting
    ``hippocorpus.sample.fraction`` over the default's ``per_type`` would give both. For each
    group of :data:`ALTERNATIVES`, the last of ``sources`` (config mappings in the order they
    were merged: the Snakefile's config file, then ``--configfile``s, then ``--config``) that
    sets any key of the group decides: the group's other keys are set to None in ``config``
    (changed in place and returned). Two alternatives set in the same source are an error.
    """
    for path, keys in ALTERNATIVES:
        chosen: set[str] = set()
        for source in sources:
            given = {k for k in keys if _block(source, path).get(k) is not None}
            if given:
                chosen = given
        if len(chosen) > 1:
            names = " and ".join(".".join((*path, k)) for k in sorted(chosen))
            raise StoryflowError(
                f"config: {names} are alternatives: set one of them (a later config file "
                "replaces the other)"
            )
        block = _block(config, path)
        if chosen and isinstance(block, dict):
            for key in set(keys) - chosen:
                block[key] = None
    return config


def model_references() -> list[tuple[str, ...]]:
    """The config keys that name models of ``models`` for a role (null: the models with that
    role): each measure's roles' keys (:func:`storyflow.plan.registry.roles`), and
    ``regression.models``, which chooses among the sequentiality scorers."""
    keys = [role.key for role in (*registry.roles(), sequentiality.REGRESSED_ROLE)]
    return [key for key in keys if key]


def resolve_model_references(
    config: dict[str, Any], sources: Sequence[Mapping[str, Any] | None]
) -> list[str]:
    """Let a config file that replaces ``models`` drop the model names of earlier files.

    Snakemake replaces the ``models`` list of an earlier config file but merges the measure
    blocks key by key, so a model list named by the default config (``tension.forecasters:
    [smollm2-135m-instruct]``) would survive into a config whose ``models`` no longer holds that
    model. For each key of :func:`model_references` set only by sources before the last one
    that sets ``models``, the key is reset to None (the models with the role, from the new list).
    Returns the keys reset (changed in place).
    """
    last_models = max((i for i, s in enumerate(sources) if s and "models" in s), default=-1)
    reset = []
    for path in model_references():
        setters = [i for i, s in enumerate(sources) if path[-1] in _block(s, path[:-1])]
        if setters and max(setters) < last_models:
            block = _block(config, path[:-1])
            if isinstance(block, dict) and block.get(path[-1]) is not None:
                block[path[-1]] = None
                reset.append(".".join(path))
    return reset


def apply_measures(config: dict[str, Any]) -> dict[str, Any]:
    """Let the top-level ``measures`` list decide which measures run.

    A researcher who wants one measure on their own corpus should not have to switch off every
    measure the default config turns on. When ``measures`` is a list, every measure of the
    registry whose block has an ``enabled`` switch, and the comparison of measures, gets
    ``enabled`` true when the list names it and false otherwise (changed in place and
    returned); sequentiality, which has no switch, always runs. None leaves every block's
    ``enabled`` as the config files set it."""
    chosen = config.get("measures")
    if chosen is None:
        return config
    unknown = [name for name in chosen if name not in CHOOSABLE]
    if unknown:
        raise StoryflowError(
            f"config: measures names {', '.join(map(repr, unknown))}, which is no measure "
            f"(measures: {', '.join(CHOOSABLE)}); fix the spelling, or add the measure "
            "(docs/adding_a_measure.md)"
        )
    for name in SWITCHABLE:
        block = config.get(name)
        if isinstance(block, dict) and "enabled" in block:
            block["enabled"] = name in chosen
    return config


#: The names a ``measures`` list may hold: the registry's measures and the comparison.
CHOOSABLE = (*registry.names(), "comparison")
#: The blocks a ``measures`` list switches: all of those but sequentiality (which has no
#: switch: it always runs).
SWITCHABLE = tuple(n for n in CHOOSABLE if n != sequentiality.OUT.name)
