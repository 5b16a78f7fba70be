"""The comparison of measures (docs/comparison.md): which story-measure tables reach it, which
corpora it compares, and its result paths."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import storyflow.plan.contrasts as contrasts
import storyflow.plan.fabula_entropy as fabula_entropy
import storyflow.plan.plot_holes as plot_holes
import storyflow.plan.sequentiality as sequentiality
import storyflow.plan.tension as tension
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout, each_corpus, fill
from storyflow.plan.registry import MEASURES

#: ``results/<corpus>/comparison/``
OUT = Layout("comparison")

# --- the files, each named once
#: Every measure's story measures of the corpus in one table.
STORIES = OUT("measures.parquet")
#: The same table as CSV, for a reader (:data:`storyflow.tables.STORY_TABLE`).
STORIES_CSV = OUT.table("measures.csv")
#: Each measure's unit and coverage, and each (measure, model)'s validity verdict.
MEASURE_UNITS = OUT.table("measure_units.csv")
MEASURE_VERDICTS = OUT.table("measure_verdicts.csv")
MEASURE_CORRELATIONS = OUT.table("measure_correlations.csv")
MODEL_AGREEMENT = OUT.table("model_agreement.csv")
MEASURE_SEPARATION = OUT.table("measure_separation.csv")
CORRELATIONS_FIGURE = OUT.figure("measure_correlations")
SEPARATION_FIGURE = OUT.figure("measure_separation")
#: The story explorer: one self-contained HTML page of the corpus's stories (docs/explorer.md).
EXPLORER = OUT("story_explorer.html")

#: Where every measure writes its story measures of a corpus
#: (:data:`storyflow.tables.STORY_MEASURES`).
STORY_MEASURES = "story_measures.parquet"


def length_control(config: Mapping[str, Any]) -> str:
    """The story length the partial correlations control for (``comparison.length``)."""
    return str(config["comparison"]["length"])


def story_measure_files(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per corpus, the story-measure tables (:data:`storyflow.tables.STORY_MEASURES`) that the
    enabled measures write for it: ``results/<corpus>/<measure>/story_measures.parquet``, in
    the registry's order of the measures."""
    runs: dict[str, list[str]] = {}
    for measure in MEASURES:
        for corpus in measure.corpora(config):
            runs.setdefault(corpus, []).append(measure.out.of(corpus, STORY_MEASURES))
    return runs


def corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora compared across measures: ``comparison.corpora``, or (null) every corpus that
    two or more enabled measures score. A listed corpus that fewer than two measures score is
    an error naming the measures that do."""
    if not config["comparison"]["enabled"]:
        return []
    files = story_measure_files(config)
    chosen = config["comparison"]["corpora"]
    if chosen is None:
        return sorted(corpus for corpus, paths in files.items() if len(paths) >= 2)
    for corpus in chosen:
        have = [Path(p).parent.name for p in files.get(corpus, [])]
        if len(have) < 2:
            raise StoryflowError(
                f"comparison.corpora names {corpus!r}, which "
                f"{'only ' + have[0] + ' scores' if have else 'no enabled measure scores'}: a "
                "comparison needs two measures on the same stories (enable another measure for "
                "it, or remove it from comparison.corpora)"
            )
    return list(chosen)


def contrasts_of(config: Mapping[str, Any], corpus: str) -> list[Mapping[str, Any]]:
    """The contrasts ``corpus`` declares (HIPPOCORPUS, books, a CSV corpus); none for HANNA and
    ROCStories, whose contrasts come from their data (storyflow.comparison.separation)."""
    if corpus in ("hanna", "rocstories"):
        return []
    return contrasts.contrasts(config, corpus)


#: The kinds of per-story files the story explorer reads beside the story table, in the order
#: its rule names them (:func:`explorer_files`).
EXPLORER_INPUTS = (
    "sentence_scores",
    "tension_curves",
    "fabula_versions",
    "fabula_questions",
    "fabula_answers",
    "plot_hole_stories",
    "plot_hole_answers",
)


def explorer_files(config: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    """Per compared corpus, the per-story files the story explorer shows beside the story
    table, by kind (:data:`EXPLORER_INPUTS`): each model's sentence sequentiality, each
    forecaster and judge's tension curve, the fabula-entropy passages, questions and each
    reader's answers, the plot-hole makers' story versions and the detectors' scored answers.
    A kind is [] for a corpus its measure does not score (no tension on the books: the page
    shows what exists)."""
    seq_models = sequentiality.models(config)
    ten = tension.models_and_corpora(config)
    readers = fabula_entropy.readers(config)
    makers = plot_holes.makers(config)
    files = {}
    for corpus in corpora(config):
        kinds: dict[str, list[str]] = {kind: [] for kind in EXPLORER_INPUTS}
        if corpus in sequentiality.corpora(config):
            kinds["sentence_scores"] = [
                fill(sequentiality.SENTENCE_SCORES, corpus=corpus, model=m) for m in seq_models
            ]
        if corpus in ten["corpora"]:
            kinds["tension_curves"] = [
                fill(tension.CURVES, corpus=corpus, model=m, judge=j)
                for m in ten["forecasters"]
                for j in ten["judges"]
            ]
        if corpus in fabula_entropy.corpora(config):
            kinds["fabula_versions"] = [fill(fabula_entropy.VERSIONS, corpus=corpus)]
            kinds["fabula_questions"] = [fill(fabula_entropy.QUESTIONS, corpus=corpus)]
            kinds["fabula_answers"] = [
                fill(fabula_entropy.ANSWERS, corpus=corpus, model=m) for m in readers
            ]
        if corpus in plot_holes.corpora(config):
            kinds["plot_hole_stories"] = [
                fill(plot_holes.MADE, corpus=corpus, maker=m) for m in makers
            ]
            kinds["plot_hole_answers"] = [fill(plot_holes.SCORED_ANSWERS, corpus=corpus)]
        files[corpus] = kinds
    return files


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The comparison's tables and figures (rule all); [] when it is off."""
    return each_corpus(
        corpora(config),
        STORIES,
        STORIES_CSV,
        MEASURE_CORRELATIONS,
        MODEL_AGREEMENT,
        MEASURE_SEPARATION,
        CORRELATIONS_FIGURE.png,
        SEPARATION_FIGURE.png,
        EXPLORER,
    )
