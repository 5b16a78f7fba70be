"""Library constants that list a config setting's allowed values equal the schema's enum.

The schema (workflow/schemas/config.schema.yaml) is where a user's value is checked; a library
constant that names the same values (to validate a direct call, to loop over them, to type
them) must not drift from it. Each pair below is one such mirror.
"""

from __future__ import annotations

import importlib
import typing
from pathlib import Path

import pytest

from storyflow.config_files import load_schema

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"

#: schema path (``properties`` and ``items`` left out) -> (module, constant, values the schema
#: has beside the constant's: ``auto`` resolved in the library)
MIRRORS = {
    "nll.beyond_window": ("storyflow.lm.nll.planning", "BEYOND_WINDOW", ()),
    "regression.kinds": ("storyflow.measures.sequentiality.regression", "KINDS", ()),
    "narrative_sense.random_story": (
        "storyflow.measures.narrative_sense.threshold", "WEIGHTINGS", ()),
    "plot_holes.validation.classes": ("storyflow.measures.plot_holes.lexicon", "CLASS_NAMES", ()),
    "plot_holes.model_maker.relevance": (
        "storyflow.measures.plot_holes.llm_maker", "RELEVANCE_MODES", ()),
    "plot_holes.model_maker.acts": ("storyflow.measures.plot_holes.llm_maker", "ACT_SPLITS", ()),
    "plot_holes.nli.pairs": ("storyflow.measures.plot_holes.nli", "PAIR_SETS", ()),
    "fabula_entropy.corpora.kinds": (
        "storyflow.measures.fabula_entropy.compare", "INDEX_KINDS", ()),
    "fabula_entropy.headline": ("storyflow.measures.fabula_entropy.compare", "INDICES", ()),
    "fabula_entropy.calibration": (
        "storyflow.measures.fabula_entropy.readers", "CALIBRATIONS", ()),
    "models.prompt": ("storyflow.lm.prompts", "GENERATION_MODES", ("auto",)),
}  # fmt: skip


def schema_enum(path: str) -> list[str]:
    """The ``enum`` at ``path`` of the config schema, its measures' parts inlined (its
    ``items`` for a list setting)."""
    node = load_schema(SCHEMA)
    for key in path.split("."):
        node = node["properties"][key]
        if "items" in node and "properties" in node["items"]:
            node = node["items"]
    return node["items"]["enum"] if "items" in node else node["enum"]


@pytest.mark.parametrize("path", sorted(MIRRORS))
def test_a_constant_that_lists_a_settings_values_equals_the_schemas_enum(path: str) -> None:
    module, name, schema_only = MIRRORS[path]
    value = getattr(importlib.import_module(module), name)
    values = typing.get_args(value) or tuple(value)  # a Literal type or a tuple
    assert len(set(values)) == len(values)
    assert {*values, *schema_only} == set(schema_enum(path)), (module, name)


def test_the_measures_roles_are_the_schemas_roles() -> None:
    from storyflow.plan import registry

    names = [role.name for role in registry.roles()]
    assert sorted(names) == sorted(schema_enum("models.roles"))
    assert set(registry.scoring_roles()) < set(names)
