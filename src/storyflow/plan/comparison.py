"""The comparison of measures (docs/comparison.md): which story-measure tables reach it, which
corpora it compares, and its result paths."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import storyflow.plan.contrasts as contrasts
import storyflow.plan.fabula_entropy as fabula_entropy
import storyflow.plan.narrative_sense as narrative_sense
import storyflow.plan.plot_holes as plot_holes
import storyflow.plan.sequentiality as sequentiality
import storyflow.plan.tension as tension
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout

#: ``results/<corpus>/comparison/``
OUT = Layout("comparison")


#: The measures whose story-measure tables the comparison reads, with the corpora each scores.
SCORED_BY = (
    (sequentiality.OUT, sequentiality.corpora),
    (narrative_sense.OUT, narrative_sense.targets),
    (tension.OUT, lambda config: tension.choices(config)["corpora"]),
    (plot_holes.OUT, plot_holes.corpora),
    (fabula_entropy.OUT, fabula_entropy.corpora),
)


def story_measure_files(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per corpus, the story-measure tables (:data:`storyflow.tables.STORY_MEASURES`) that the
    enabled measures write for it: ``results/<corpus>/<measure>/story_measures.parquet``."""
    runs: dict[str, list[str]] = {}
    for layout, scored in SCORED_BY:
        for corpus in scored(config):
            runs.setdefault(corpus, []).append(layout.story_measures(corpus))
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


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The comparison's tables and figures (rule all); [] when it is off."""
    return [
        OUT.of(c, *parts)
        for c in corpora(config)
        for parts in (
            ("measures.parquet",),
            ("tables", "measure_correlations.csv"),
            ("tables", "model_agreement.csv"),
            ("tables", "measure_separation.csv"),
            ("figures", "measure_correlations.png"),
            ("figures", "measure_separation.png"),
        )
    ]
