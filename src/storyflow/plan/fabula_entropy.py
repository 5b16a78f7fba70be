"""Fabula Entropy Indexing (docs/fabula_entropy.md): corpora, readers, the settings of the
items and of the answers, and the result paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.roles as roles
from storyflow.corpora import corpus_kind
from storyflow.errors import StoryflowError
from storyflow.measures.fabula_entropy import lexicon
from storyflow.plan.layout import Layout, each_corpus, fill
from storyflow.plan.statistics import settings as shared_statistics

#: ``results/<corpus>/fabula_entropy/``
OUT = Layout("fabula_entropy")

#: The models it uses: readers that answer the yes/no questions.
READER_ROLE = roles.Role("fabula_entropy.reader", ("fabula_entropy", "readers"))
ROLES = (READER_ROLE,)

# --- the files, each named once (wildcards: {corpus}, {model} the reader)
#: The passage versions (original and corrupted), their questions, the corruptions made and the
#: stories left out (:data:`storyflow.tables.FEI_VERSIONS` ...).
VERSIONS = OUT("versions.parquet")
QUESTIONS = OUT("questions.parquet")
CORRUPTIONS = OUT("corruptions.parquet")
EXCLUDED = OUT.table("excluded.csv")
#: A reader's P(yes) of every question and what it cost.
ANSWERS = OUT("answers/{model}.parquet")
COST = OUT.table("cost/{model}.csv")
#: The readers' checks, their table, the indices per story version, original vs corrupted, the
#: means per version and the story measures.
VALIDITY = OUT.table("validity.csv")
READERS = OUT.table("readers.csv")
STORY_INDICES = OUT("story_indices.parquet")
COMPARISON = OUT.table("comparison.csv")
DOSE_RESPONSE = OUT.table("dose_response.csv")
STORY_MEASURES = OUT("story_measures.parquet")
DISTRIBUTIONS_FIGURE = OUT.figure("distributions")
DOSE_RESPONSE_FIGURE = OUT.figure("dose_response")


def packaged_lexicon() -> str:
    """The antonym lexicon packaged with the library (the EWC corruption's): read from the
    installed package, never from a checkout's folder, so the rules work as a module."""
    return str(lexicon.packaged_lexicon())


def enabled(config: Mapping[str, Any]) -> bool:
    return bool(config["fabula_entropy"]["enabled"])


def corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora the fabula-entropy stage reads (``fabula_entropy.corpora``), each known; the
    book passages need ``books.enabled``; [] when the stage is off."""
    if not enabled(config):
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
    if not enabled(config):
        return []
    readers = READER_ROLE.models(config)
    if not readers:
        raise StoryflowError(
            f"config: fabula_entropy is enabled but no model reads: give a model the role "
            f"{READER_ROLE.name} (models[].roles) or name readers in {READER_ROLE.setting}"
        )
    return readers


def reading(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings that change every reader's answers (rule answer_fabula_questions)."""
    block = config["fabula_entropy"]
    return {k: block[k] for k in ("variants", "labels", "calibration", "min_mass", "n_ctx")}


def human_answers(config: Mapping[str, Any], corpus: str) -> list[str]:
    """The corpus's human-answer CSV (``fabula_entropy.human_answers``), if one is configured."""
    path = config["fabula_entropy"]["human_answers"].get(corpus)
    return [path] if path else []


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


def reader_thresholds(config: Mapping[str, Any]) -> dict[str, Any]:
    """The readers' validity thresholds (``validity.reader``)."""
    return dict(config["validity"]["reader"])


def statistics(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the stage's intervals and tests depend on (:mod:`storyflow.plan.statistics`)."""
    return shared_statistics(config, "confidence", "resamples", "seed", "min_group_size")


def validity_tables(config: Mapping[str, Any]) -> list[str]:
    """The readers' checks, one table per corpus read."""
    return each_corpus(corpora(config), VALIDITY)


def cost_settings(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per corpus, what its answers will cost depends on: the items (only ROCStories has a
    wrong ending to swap in), the readers and the prompt variants (:mod:`storyflow.estimate`)."""
    if not enabled(config):
        return {}
    chosen = readers(config)
    settings = {}
    for corpus in corpora(config):
        made = items(config, corpus)
        made["wrong_ending"] = made["wrong_ending"] and corpus == "rocstories"
        settings[corpus] = {
            "items": made,
            "readers": chosen,
            "variants": len(config["fabula_entropy"]["variants"]),
        }
    return settings


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The stage's final tables and figures (rule all); [] when it is off."""
    return each_corpus(
        corpora(config),
        VALIDITY,
        COMPARISON,
        STORY_MEASURES,
        DISTRIBUTIONS_FIGURE.png,
        DOSE_RESPONSE_FIGURE.png,
    )


# --- the paper it replicates (Fabula Entropy Indexing: storyflow.replication.papers.FABULA_ENTROPY)


def paper_corpus(config: Mapping[str, Any]) -> bool:
    """Whether it reads a corpus."""
    return bool(corpora(config))


def paper_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The files the comparison reads: per corpus, its comparison and story indices."""
    files = {}
    for corpus in corpora(config):
        files[f"{corpus}_comparison"] = [fill(COMPARISON, corpus=corpus)]
        files[f"{corpus}_indices"] = [fill(STORY_INDICES, corpus=corpus)]
    return files


def paper_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """None of its own beyond the replication's."""
    return {}
