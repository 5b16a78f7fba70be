"""Narrative sense (docs/narrative_sense.md): the corpora it reads and the settings of each
corpus's lemma table, and its result paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.roles as roles
from storyflow.corpora import corpus_kind
from storyflow.plan.layout import Layout, each_corpus, fill

#: ``results/<corpus>/narrative_sense/``; the shared lemma and PMI tables in
#: ``results/narrative_sense/``
OUT = Layout("narrative_sense")

#: It uses no language model (PMI of content lemmas over a reference corpus).
ROLES: tuple[roles.Role, ...] = ()

# --- the files, each named once (wildcards: {corpus}, {source})
#: A source corpus's stories as content lemmas (:data:`storyflow.tables.LEMMAS`).
LEMMAS = OUT.shared("lemmas/{source}.parquet")
#: The PMI table of lemma pairs over the reference corpora, and its vocabulary.
PMI = OUT.shared("pmi.parquet")
VOCABULARY = OUT.shared("vocabulary.parquet")
#: Each target story's pair scores and threshold test.
STORY_SCORES = OUT("story_scores.parquet")
#: Per group: stories above the threshold and the pair-score medians.
GROUPS = OUT.table("narrative_sense.csv")
#: Stories left out by the short-set filter.
EXCLUDED_STORIES = OUT.table("excluded_stories.csv")
PAIR_SCORES_FIGURE = OUT.figure("pair_scores")
STORY_MEASURES = OUT("story_measures.parquet")


def enabled(config: Mapping[str, Any]) -> bool:
    return bool(config["narrative_sense"]["enabled"])


def corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora whose stories get a narrative-sense score (``narrative_sense.targets``; []
    when the stage is off)."""
    ns = config["narrative_sense"]
    return list(ns["targets"]) if ns["enabled"] else []


def sources(config: Mapping[str, Any]) -> list[str]:
    """Every corpus the narrative-sense stage reads (reference and targets), each one known;
    [] when the stage is off."""
    ns = config["narrative_sense"]
    if not ns["enabled"]:
        return []
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


def settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the narrative-sense jobs depend on, each under the name its rules' params use (the
    lemma tables' settings per source: :func:`lemma_settings`)."""
    ns = config["narrative_sense"]
    keys = (
        "min_stories", "reference_max_tokens", "max_tokens", "min_tokens", "top_pairs",
        "random_story", "alpha", "seed", "folds",
    )  # fmt: skip
    return {k: ns[k] for k in keys}


def score_settings(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """How target ``corpus`` is scored and tested (rule ``score_narrative_sense``'s params;
    :class:`storyflow.measures.narrative_sense.threshold.ScoreSettings`): :func:`settings` and
    whether it is :func:`cross_fitted`."""
    return {**settings(config), "cross_fitted": cross_fitted(config, corpus)}


def references(config: Mapping[str, Any]) -> list[str]:
    """The reference corpora whose lemma pairs make the PMI table
    (``narrative_sense.reference``)."""
    return list(config["narrative_sense"]["reference"])


def reference_lemmas(config: Mapping[str, Any]) -> list[str]:
    """The lemma tables of the reference corpora (the PMI table's input)."""
    return [fill(LEMMAS, source=name) for name in references(config)]


def score_inputs(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """What a target corpus is scored from: its lemmas, and the PMI table and its vocabulary,
    or (cross-fitted, :func:`cross_fitted`) the other reference corpora's lemmas."""
    lemmas = fill(LEMMAS, source=corpus)
    if not cross_fitted(config, corpus):
        return {"lemmas": lemmas, "pairs": PMI, "vocabulary": VOCABULARY}
    others = [s for s in config["narrative_sense"]["reference"] if s != corpus]
    return {"lemmas": lemmas, "reference": [fill(LEMMAS, source=s) for s in others]}


def validity_tables(config: Mapping[str, Any]) -> list[str]:
    """None: no model is behind a narrative-sense score."""
    del config
    return []


def cost_settings(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Nothing for the language-model cost estimate: no model is asked."""
    del config
    return {}


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The stage's final tables and figures (rule all); [] when it is off."""
    return each_corpus(corpora(config), GROUPS, PAIR_SCORES_FIGURE.png)


# --- the paper it replicates (Roemmele et al.: storyflow.replication.papers.NARRATIVE_SENSE)


def paper_corpus(config: Mapping[str, Any]) -> bool:
    """Whether it scores a corpus (:func:`sources`)."""
    return bool(sources(config))


def paper_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The files the comparison reads: the PMI table; HANNA's groups and story scores."""
    inputs = {"pmi": [PMI]}
    if "hanna" in corpora(config):
        inputs["hanna_table"] = [fill(GROUPS, corpus="hanna")]
        inputs["hanna_scores"] = [fill(STORY_SCORES, corpus="hanna")]
    return inputs


def paper_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The reference corpora of its PMI (:func:`references`)."""
    return {"reference": references(config)}
