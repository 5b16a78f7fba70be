"""Fabula Entropy Indexing (docs/fabula_entropy.md): corpora, readers, the settings of the
items and of the answers, and the result paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.roles as roles
from storyflow.corpora import corpus_kind
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout

#: ``results/<corpus>/fabula_entropy/``
OUT = Layout("fabula_entropy")


def corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora the fabula-entropy stage reads (``fabula_entropy.corpora``), each known; the
    book passages need ``books.enabled``; [] when the stage is off."""
    if not config["fabula_entropy"]["enabled"]:
        return []
    names = [entry["name"] for entry in config["fabula_entropy"]["corpora"]]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise StoryflowError(f"config: fabula_entropy.corpora lists {repeated} more than once")
    for name in names:
        corpus_kind(config, name)
        if name == "books" and not config["books"]["enabled"]:
            raise StoryflowError(
                "config: fabula_entropy.corpora names books, but books.enabled is false; "
                "enable the books or remove books from fabula_entropy.corpora"
            )
    return names


def items(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """The settings that change a corpus's passages and questions (rule make_fabula_items):
    the corpus entry's ``kinds``, ``lines`` (null: the whole story) and ``wrong_ending`` over
    the block's defaults, and the block's question, corruption and template settings."""
    block = config["fabula_entropy"]
    entry = next(e for e in block["corpora"] if e["name"] == corpus)
    lines = entry["lines"] if "lines" in entry else block["lines"]
    return {
        "kinds": list(entry["kinds"]),
        "lines": None if lines is None else int(lines),
        "wrong_ending": bool(entry.get("wrong_ending", block["wrong_ending"])),
        **{
            key: block[key]
            for key in (
                "questions", "controls", "span", "plot_points", "segment_lines", "templates",
                "retries", "seed",
            )
        },
        "ewc_k": list(block["ewc_k"]),
    }  # fmt: skip


def readers(config: Mapping[str, Any]) -> list[str]:
    """The reader models (``fabula_entropy.readers``; null = the role fabula_entropy.reader);
    [] when the stage is off."""
    if not config["fabula_entropy"]["enabled"]:
        return []
    readers = roles.role_models(
        config, "fabula_entropy.readers", config["fabula_entropy"]["readers"],
        "fabula_entropy.reader",
    )  # fmt: skip
    if not readers:
        raise StoryflowError(
            "config: fabula_entropy is enabled but no model reads: give a model the role "
            "fabula_entropy.reader (models[].roles) or name readers in fabula_entropy.readers"
        )
    return readers


def reading(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings that change every reader's answers (rule answer_fabula_questions)."""
    block = config["fabula_entropy"]
    return {k: block[k] for k in ("variants", "labels", "calibration", "min_mass", "n_ctx")}


def population(config: Mapping[str, Any]) -> int:
    """Answers per question the configured readers give the hard index: reader models ×
    prompt variants × ``samples`` (1 when ``samples`` is null); 0 when the stage is off."""
    block = config["fabula_entropy"]
    return len(readers(config)) * len(block["variants"]) * (block["samples"] or 1)


def index(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of the index (rule index_fabula_entropy): ``headline`` (the measure the
    tables and figures lead with) and ``samples`` (answers per reader for the hard index).

    A hard headline over one answer per question would be 0 for every story and version (one
    yes/no never splits): that config stops here, naming the ways out."""
    block = config["fabula_entropy"]
    settings = {"headline": block["headline"], "samples": block["samples"]}
    if block["enabled"] and block["headline"] == "hard" and population(config) < 2:
        raise StoryflowError(
            "config: fabula_entropy.headline is hard, but the readers give one answer per "
            "question (one reader model, one prompt variant, samples null), so the hard index "
            "is 0 for every story; add reader models or variants, set fabula_entropy.samples to "
            "2 or more, or set fabula_entropy.headline: soft"
        )
    return settings


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The stage's final tables and figures (rule all); [] when it is off."""
    return [
        OUT.of(c, *parts)
        for c in corpora(config)
        for parts in (
            ("tables", "validity.csv"),
            ("tables", "comparison.csv"),
            ("story_measures.parquet",),
            ("figures", "distributions.png"),
            ("figures", "dose_response.png"),
        )
    ]
