"""What the workflow runs, decided from the validated config alone (no data read).

One module per measure (``sequentiality``, ``narrative_sense``, ``tension``, ``fabula_entropy``,
``plot_holes``, and ``comparison`` for the comparison of them) decides which corpora, models and
settings that measure's jobs get, and owns the measure's result paths (its
:class:`~storyflow.plan.layout.Layout`). Shared decisions: ``merge`` (how config files merge),
``roles`` (models by role), ``contrasts``, ``validity`` and ``cost``.

The workflow calls these at parse time, so a config mistake they can see stops the run before
the first job, with one message naming the key. They are plain functions of the config mapping,
tested without Snakemake. A measure that is off plans nothing: its functions return empty lists.
"""

from collections.abc import Mapping
from typing import Any

from storyflow.plan import (
    comparison,
    contrasts,
    cost,
    fabula_entropy,
    layout,
    merge,
    narrative_sense,
    plot_holes,
    replication,
    roles,
    sequentiality,
    tension,
    validity,
)

#: The measures, in the order the report and the comparison list them.
MEASURES = ("sequentiality", "narrative_sense", "tension", "fabula_entropy", "plot_holes")


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """Every final table and figure the config asks for (rule all): each corpus's sample
    counts, each measure's outputs (its ``final_outputs``), the comparison's, the validity table
    and the language-model cost estimate."""
    outputs = [
        layout.CORPUS.of(c, "tables", "sample_counts.csv") for c in sequentiality.corpora(config)
    ]
    for measure in (
        sequentiality,
        narrative_sense,
        fabula_entropy,
        comparison,
        plot_holes,
        tension,
    ):
        outputs += measure.final_outputs(config)
    outputs.append(layout.VALIDITY)
    outputs += replication.final_outputs(config)
    if cost.settings(config):
        outputs.append(layout.LM_COST)
    return outputs


__all__ = [
    "MEASURES",
    "comparison",
    "contrasts",
    "cost",
    "fabula_entropy",
    "final_outputs",
    "layout",
    "merge",
    "narrative_sense",
    "plot_holes",
    "replication",
    "roles",
    "sequentiality",
    "tension",
    "validity",
]
