"""What the workflow runs, decided from the validated config alone (no data read).

The measures are listed once, in :mod:`storyflow.plan.registry`; each has one planning module
(``sequentiality``, ``narrative_sense``, ``tension``, ``fabula_entropy``, ``plot_holes``) that
decides which corpora, models and settings its jobs get and names every file it writes (from
its :class:`~storyflow.plan.layout.Layout`). Around them: ``corpus`` (the stories and sentences
every measure reads), ``comparison`` (the measures side by side), ``validity``, ``cost`` and
``replication`` (what reads every measure's results), ``contrast_answers`` (the answer to
each corpus's contrasts), ``summary`` (the plan in words, logged
when the workflow is planned), and the shared decisions ``merge`` (how
config files merge), ``roles`` (models by role), ``contrasts`` and ``statistics``.

The workflow calls these at parse time, so a config mistake they can see stops the run before
the first job, with one message naming the key. They are plain functions of the config mapping,
tested without Snakemake. A measure that is off plans nothing: its functions return empty lists.
"""

from collections.abc import Mapping
from typing import Any

from storyflow.plan import (
    comparison,
    contrast_answers,
    contrasts,
    corpus,
    cost,
    fabula_entropy,
    layout,
    merge,
    models,
    narrative_sense,
    plot_holes,
    registry,
    replication,
    roles,
    sequentiality,
    statistics,
    summary,
    tension,
    validity,
)


def figure_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """How every figure is drawn (``figures``: ``dpi``, and the sequentiality panels'
    ``width_per_panel`` and ``height_per_panel`` in inches): a figure rule's params."""
    return dict(config["figures"])


def spacy_model(config: Mapping[str, Any]) -> str:
    """The spaCy pipeline every rule that splits or parses text uses
    (``sentences.spacy_model``): one for all, so the sentences of every measure agree."""
    return str(config["sentences"]["spacy_model"])


def read_corpora(config: Mapping[str, Any]) -> list[str]:
    """Every corpus whose file the config's run reads: the sequentiality corpora, each
    measure's corpora, narrative sense's reference corpora and, while tension runs, its
    calibration corpus. Rule all checks that each one's file is there (or downloadable) before
    any job (:func:`storyflow.plan.corpus.data_problem`)."""
    read = sequentiality.corpora(config) + narrative_sense.sources(config)
    for measure in registry.MEASURES:
        read += measure.corpora(config)
    if tension.corpora(config):
        read.append(tension.CALIBRATION_CORPUS)
    return list(dict.fromkeys(read))


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """Every final table and figure the config asks for (rule all): each corpus's sample
    counts, each measure's outputs (in the registry's order), the comparison's, the validity
    table, the replication tables, the language-model cost estimate, the model provenance
    table and the run record."""
    outputs = corpus.final_outputs(config)
    for measure in registry.MEASURES:
        outputs += measure.final_outputs(config)
    outputs += comparison.final_outputs(config)
    outputs.append(layout.VALIDITY)
    outputs += replication.final_outputs(config)
    outputs += contrast_answers.final_outputs(config)
    if cost.settings(config):
        outputs.append(layout.LM_COST)
    outputs.append(models.PROVENANCE)
    outputs.append(layout.RUN_RECORD)
    return outputs


__all__ = [
    "comparison",
    "contrast_answers",
    "contrasts",
    "corpus",
    "cost",
    "fabula_entropy",
    "final_outputs",
    "layout",
    "merge",
    "models",
    "narrative_sense",
    "plot_holes",
    "read_corpora",
    "registry",
    "replication",
    "roles",
    "sequentiality",
    "statistics",
    "summary",
    "tension",
    "validity",
]
