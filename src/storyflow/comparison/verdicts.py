"""Which story measures rest on a model that failed its validity check.

A story measure (a column of the story table) depends on the models of its row: a tension
no-rate on its forecaster and judge, a fabula-entropy index on its reader(s), a plot-hole
P(error) on its detector. Each measure checks those models in the run (docs/validity.md) and
writes the checks to ``results/validity.csv``. :func:`measure_verdicts` reads that table back
for every (measure, model) of a corpus's story measures and says, in one word, whether the
scores describe the stories (``valid``), the model (``failed``, with the failed checks), or
rest on nothing a check covers (``not checked``: sequentiality and narrative sense, whose
models score likelihoods rather than do a task; PMI; human readers). Each measure states its own
rule (:attr:`storyflow.plan.registry.Measure.verdict`, in its package's ``verdict`` module); the
caller passes the rules in (``storyflow.plan.registry.verdict_rules``), since the registry sits
above this layer.

:func:`mark` then carries the verdict into the comparison tables: a correlation, an agreement
or a separation row is ``valid`` only when none of the measures and models it rests on failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from storyflow import tables
from storyflow.validity import FAILED, NOT_CHECKED, VerdictRule


def verdict(
    table: pd.DataFrame, corpus: str, measure: str, model: str, rules: Mapping[str, VerdictRule]
) -> tuple[str, str]:
    """(verdict, the failed checks in words) of one story measure of ``corpus`` computed with
    ``model`` ('' = none), from the validity ``table`` (:data:`storyflow.tables.VALIDITY`), by
    the rule of the measure it belongs to (``rules``: measure name → its rule,
    ``storyflow.plan.registry.verdict_rules``; a measure with none is not checked)."""
    rule = rules.get(measure.split(".", 1)[0])
    if rule is None or not model:
        return NOT_CHECKED, ""
    return rule(table, corpus, measure, model)


def measure_verdicts(
    measures: pd.DataFrame,
    validity: pd.DataFrame,
    corpus: str,
    rules: Mapping[str, VerdictRule],
) -> pd.DataFrame:
    """:data:`storyflow.tables.MEASURE_VERDICTS`: one row per (measure, model) of the corpus's
    :data:`storyflow.tables.STORY_MEASURES` rows, with its verdict and failed checks by the
    measures' ``rules`` (:func:`verdict`)."""
    pairs = measures[["measure", "model"]].drop_duplicates().sort_values(["measure", "model"])
    rows = []
    for pair in pairs.itertuples(index=False):
        word, failed = verdict(validity, corpus, str(pair.measure), str(pair.model), rules)
        rows.append(
            tables.MEASURE_VERDICTS.row(
                measure=pair.measure, model=pair.model, verdict=word, failed=failed
            )
        )
    return tables.MEASURE_VERDICTS.frame(rows)


def failed_pairs(verdicts: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(measure, model) → its failed checks, for the pairs whose verdict is ``failed``."""
    bad = verdicts[verdicts["verdict"] == FAILED]
    return {
        (str(m), str(mod)): str(f)
        for m, mod, f in zip(bad["measure"], bad["model"], bad["failed"], strict=True)
    }


def failed_on_row(
    model: str, measures: Iterable[str], failed: Mapping[tuple[str, str], str]
) -> str:
    """The measures of a story-table row (of ``model``) that rest on a failed model, space-
    separated ('' when none)."""
    return " ".join(m for m in measures if (m, model) in failed)


#: The columns :func:`mark` adds to a comparison table.
LABELS = tuple(tables.VALIDITY_LABELS)


def mark(
    frame: pd.DataFrame,
    verdicts: pd.DataFrame,
    pairs: Iterable[tuple[str, str]],
) -> pd.DataFrame:
    """``frame`` with ``valid`` (bool: no measure × model its row rests on failed) and
    ``failed`` (those pairs, ``measure@model``, space-separated). ``pairs``: the (measure
    column, model column) pairs each row rests on, e.g. ``[("measure_a", "model"),
    ("measure_b", "model")]``."""
    bad = failed_pairs(verdicts)
    pairs = list(pairs)
    labels = []
    for _, row in frame.iterrows():
        names = []
        for measure_col, model_col in pairs:
            key = (str(row[measure_col]), "" if pd.isna(row[model_col]) else str(row[model_col]))
            if key in bad and f"{key[0]}@{key[1]}" not in names:
                names.append(f"{key[0]}@{key[1]}")
        labels.append(" ".join(names))
    return frame.assign(valid=[not x for x in labels], failed=labels)
