"""The papers whose published results are set beside ours: one record each (:class:`Paper`),
and one paper's comparison by name (rule compare_with_paper).

A paper's record is its measure's (``storyflow.plan.registry.Measure.paper``); what the run must
plan for it (whether a corpus of the paper's runs, the files its comparison reads, the settings
it depends on) is its measure's planning module's (``paper_corpus``, ``paper_inputs``,
``paper_settings``: storyflow.plan.replication reads them through the registry).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from storyflow.replication import decide, judging, published

#: Each paper's function from (published figures, result files by name, settings) to ours by
#: published id. The measures' own tables carry the verdicts of their validity checks.
Comparer = Callable[
    [pd.DataFrame, Mapping[str, Sequence[str]], Mapping[str, Any]], dict[str, judging.Ours]
]


@dataclass(frozen=True)
class Paper:
    """One compared paper: its ``name`` (the stem of its text in the papers folder, of its
    published-results file and of its results), the short ``title`` a reader knows it by and
    the module of its comparison (``module``, a dotted name), whose ``ours``
    is its :data:`Comparer`. The module is named, not imported: the workflow reads these
    records at every parse, and a comparison needs scipy only when it runs."""

    name: str
    title: str
    module: str

    @property
    def published(self) -> Path:
        """Its published figures (:data:`storyflow.tables.PUBLISHED`)."""
        return published.path_of(self.name)

    @property
    def comparer(self) -> Comparer:
        """Its comparison: published figures, result files by name, settings → ours by id."""
        found: Comparer = importlib.import_module(self.module).ours
        return found


FICTION_FLOWS = Paper(
    "fiction_flows", "Fiction Flows (Piper et al.)", "storyflow.replication.fiction_flows"
)
NARRATIVE_SENSE = Paper(
    "narrative_sense_pmi",
    "Narrative sense (Roemmele et al.)",
    "storyflow.replication.narrative_sense",
)
HUNDRED_ENDINGS = Paper(
    "hundred_endings_tension", "100-Endings (Sui et al.)", "storyflow.replication.hundred_endings"
)
FABULA_ENTROPY = Paper(
    "fabula_entropy_indexing",
    "Fabula Entropy Indexing (Castricato et al.)",
    "storyflow.replication.fabula_entropy",
)
FLAWED_FICTIONS = Paper(
    "flawed_fictions", "FlawedFictions (Ahuja et al.)", "storyflow.replication.flawed_fictions"
)

#: Every paper, by name: the one list of them.
PAPERS: dict[str, Paper] = {
    p.name: p
    for p in (FICTION_FLOWS, NARRATIVE_SENSE, HUNDRED_ENDINGS, FABULA_ENTROPY, FLAWED_FICTIONS)
}


def titles() -> dict[str, str]:
    """Each paper's short title, by name."""
    return {name: paper.title for name, paper in PAPERS.items()}


def compare(
    paper: str, files: Mapping[str, Sequence[str]], settings: Mapping[str, Any]
) -> pd.DataFrame:
    """The :data:`storyflow.tables.REPLICATION` table of ``paper`` from the files
    (``published`` and the paper's result tables, storyflow.plan.replication), each row judged
    by the rule of ``settings["verdicts"]`` (:class:`storyflow.replication.judging.Rule`),
    an inconclusive one priced at ``settings["rates"]``
    (:class:`storyflow.replication.decide.Rates`; in tokens only without them)."""
    figures = published.read(files["published"][0])
    ours = PAPERS[paper].comparer(figures, files, settings)
    rule = judging.Rule(**settings["verdicts"])
    rates = decide.Rates.from_params(settings.get("rates"))
    return judging.table(paper, figures, ours, rule, rates)
