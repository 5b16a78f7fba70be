"""One paper's comparison, by name: the published figures beside the run's (rule
compare_with_paper)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from storyflow.replication import (
    agreement,
    decide,
    fabula_entropy,
    fiction_flows,
    flawed_fictions,
    hundred_endings,
    narrative_sense,
    published,
)

#: Each paper's function from (published figures, result files by name, settings) to ours by
#: published id. The measures' own tables carry the verdicts of their validity checks.
Comparer = Callable[
    [pd.DataFrame, Mapping[str, Sequence[str]], Mapping[str, Any]], dict[str, agreement.Ours]
]
COMPARERS: dict[str, Comparer] = {
    "fiction_flows": fiction_flows.ours,
    "hundred_endings_tension": hundred_endings.ours,
    "flawed_fictions": flawed_fictions.ours,
    "narrative_sense_pmi": narrative_sense.ours,
    "fabula_entropy_indexing": fabula_entropy.ours,
}


def compare(
    paper: str, files: Mapping[str, Sequence[str]], settings: Mapping[str, Any]
) -> pd.DataFrame:
    """The :data:`storyflow.tables.REPLICATION` table of ``paper`` from the files
    (``published`` and the paper's result tables, storyflow.plan.replication), each row judged
    by the rule of ``settings["verdicts"]`` (:class:`storyflow.replication.agreement.Rule`),
    an inconclusive one priced at ``settings["rates"]``
    (:class:`storyflow.replication.decide.Rates`; in tokens only without them)."""
    figures = published.read(files["published"][0])
    ours = COMPARERS[paper](figures, files, settings)
    rule = agreement.Rule(**settings["verdicts"])
    rates = decide.Rates.from_params(settings.get("rates"))
    return agreement.table(paper, figures, ours, rule, rates)
