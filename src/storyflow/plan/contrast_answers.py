"""The answer to each corpus's contrasts (:mod:`storyflow.contrast_answers.answers`): which corpora
get one, the settings it depends on and its files (in the corpus's sequentiality folder; the
rules are in workflow/rules/replication/contrasts.smk, the report's category "Contrasts")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.comparison as comparison
import storyflow.plan.replication as replication
import storyflow.plan.sequentiality as sequentiality
from storyflow.plan.contrasts import contrasts
from storyflow.plan.layout import each_corpus, fill
from storyflow.plan.statistics import settings as statistics

#: The report category of the answers (a subcategory per corpus).
CATEGORY = "Contrasts"

# --- the files, each named once (wildcard: {corpus})
#: Every contrast × formulation × model, and the mean over models
#: (:data:`storyflow.tables.CONTRAST_ANSWERS`).
TABLE = sequentiality.OUT.table("contrast_answers.csv")
#: Its forest plot (:func:`storyflow.figures.contrasts.plot_contrast_answers`).
FIGURE = sequentiality.OUT.figure("contrast_answers")
#: The table and the plot as one page of the report (:mod:`storyflow.contrast_answers.page`).
PAGE = sequentiality.OUT.table("contrast_answers.html")
#: The study's methods and results sentences (:mod:`storyflow.contrast_answers.methods`).
METHODS = sequentiality.OUT.table("methods.md")


def corpora(config: Mapping[str, Any]) -> list[str]:
    """The sequentiality corpora that declare a contrast (HIPPOCORPUS and the books have theirs
    by default; a CSV corpus must name one)."""
    return [c for c in sequentiality.corpora(config) if contrasts(config, c)]


def settings(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """What one corpus's answers depend on (a rule's params; :class:`AnswerSettings
    <storyflow.contrast_answers.answers.AnswerSettings>`): the interval's settings, the smallest
    group tested and the fewest sentences counted (``stats``), the equivalence band, the power
    and the rates that price a decision (``replication``), the largest history summarised
    (``nll.max_history``), whether the contrasts are also answered adjusted for length and
    topic closeness (``stats.adjusted_contrasts``), the corpus's contrasts and the measure
    whose story measures the separation rows leave out (sequentiality's, answered the paper's
    way)."""
    return {
        **statistics(config, "confidence", "resamples", "seed", "min_group_size", "min_sentences"),
        "band": config["replication"]["equivalence_band"],
        "power": config["replication"]["power"],
        "rates": replication.rates(config),
        "max_history": config["nll"]["max_history"],
        "adjust": config["stats"]["adjusted_contrasts"],
        "contrasts": contrasts(config, corpus),
        "leave_out": sequentiality.OUT.name,
    }


def separation(config: Mapping[str, Any], corpus: str) -> list[str]:
    """The comparison's separation table of ``corpus`` when the comparison of measures runs on
    it (its other measures' contrasts get rows too), else []."""
    if corpus not in comparison.corpora(config):
        return []
    return [fill(comparison.MEASURE_SEPARATION, corpus=corpus)]


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """Per corpus with a contrast, its answer table, figure, page and methods (rule all)."""
    return each_corpus(corpora(config), TABLE, FIGURE.png, PAGE, METHODS)
