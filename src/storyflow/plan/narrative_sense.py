"""Narrative sense (docs/narrative_sense.md): the corpora it reads and the settings of each
corpus's lemma table, and its result paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storyflow.corpora import corpus_kind
from storyflow.plan.layout import Layout

#: ``results/<corpus>/narrative_sense/``; the shared lemma and PMI tables in
#: ``results/narrative_sense/``
OUT = Layout("narrative_sense")


def targets(config: Mapping[str, Any]) -> list[str]:
    """The corpora whose stories get a narrative-sense score ([] when the stage is off)."""
    ns = config["narrative_sense"]
    return list(ns["targets"]) if ns["enabled"] else []


def sources(config: Mapping[str, Any]) -> list[str]:
    """Every corpus the narrative-sense stage reads (reference and targets), each one known."""
    ns = config["narrative_sense"]
    sources = sorted(set(ns["reference"]) | set(ns["targets"]))
    for source in sources:
        corpus_kind(config, source)
    return sources


#: Book passages drawn per book when ``books_reference.passages_per_book`` is null (every
#: passage): more than any book holds, since ``book_passages`` takes at most this many.
ALL_PASSAGES = 2**31 - 1


def cross_fitted(config: Mapping[str, Any], corpus: str) -> bool:
    """Whether target ``corpus`` is scored fold by fold against tables without its own stories
    (``narrative_sense.folds`` set and the corpus also a reference)."""
    ns = config["narrative_sense"]
    return ns["folds"] is not None and corpus in ns["reference"]


def lemma_settings(config: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Only the settings that change ``source``'s lemma table (so reruns are precise)."""
    ns = config["narrative_sense"]
    settings: dict[str, Any] = {"kind": corpus_kind(config, source).kind}
    settings["limit"] = ns["limit"]
    settings["count_punctuation"] = ns["count_punctuation"]
    if source == "hippocorpus":
        settings["story_types"] = config["hippocorpus"]["story_types"]
    if source == "books":
        books = dict(ns["books_reference"])
        groups = books.pop("genres")
        if books["passages_per_book"] is None:
            books["passages_per_book"] = ALL_PASSAGES
        settings["books"] = books
        settings["groups"] = groups
        settings["seed"] = ns["seed"]
        settings["columns"] = config["books"]["columns"]
        settings["path_template"] = config["books"]["path_template"]
    if source in config["corpora"]:
        settings["columns"] = config["corpora"][source]["columns"]
    return settings


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The stage's final tables and figures (rule all); [] when it is off."""
    return [
        OUT.of(t, *parts)
        for t in targets(config)
        for parts in (("tables", "narrative_sense.csv"), ("figures", "pair_scores.png"))
    ]
