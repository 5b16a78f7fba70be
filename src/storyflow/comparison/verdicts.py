"""Which story measures rest on a model that failed its validity check.

A story measure (a column of the story table) depends on the models of its row: a tension
no-rate on its forecaster and judge, a fabula-entropy index on its reader(s), a plot-hole
P(error) on its detector. Each measure checks those models in the run (docs/validity.md) and
writes the checks to ``results/validity.csv``. :func:`measure_verdicts` reads that table back
for every (measure, model) of a corpus's story measures and says, in one word, whether the
scores describe the stories (``valid``), the model (``failed``, with the failed checks), or
rest on nothing a check covers (``not checked``: sequentiality and narrative sense, whose
models score likelihoods rather than do a task; PMI; human readers).

:func:`mark` then carries the verdict into the comparison tables: a correlation, an agreement
or a separation row is ``valid`` only when none of the measures and models it rests on failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from storyflow import tables
from storyflow.measures.plot_holes.validation import verdict_of
from storyflow.measures.tension.validity import labels as tension_labels

VALID, FAILED, NOT_CHECKED = "valid", "failed", "not checked"
"""The three verdicts of a (measure, model)."""


def _fabula_entropy(table: pd.DataFrame, corpus: str, label: str) -> tuple[str, str]:
    """A fabula-entropy score's verdict: ``label`` is a reader (``model/variant``), a model
    (its variants pooled), ``pooled`` (built from valid readers only) or ``human``."""
    if label == "human":
        return NOT_CHECKED, ""
    if label == "pooled":
        return VALID, ""
    mine = table[(table["measure"] == "fabula_entropy") & (table["corpus"] == corpus)]
    readers = mine[(mine["model"] == label) | mine["model"].astype(str).str.startswith(f"{label}/")]
    if readers.empty:
        return NOT_CHECKED, ""
    bad = readers[~readers["passed"]]
    if bad.empty:
        return VALID, ""
    return FAILED, "; ".join(
        f"reader {m} {c}" for m, c in zip(bad["model"], bad["check"], strict=True)
    )


def verdict(table: pd.DataFrame, corpus: str, measure: str, model: str) -> tuple[str, str]:
    """(verdict, the failed checks in words) of one story measure of ``corpus`` computed with
    ``model`` ('' = none), from the validity ``table`` (:data:`storyflow.tables.VALIDITY`).

    Tension checks its models on ROCStories and plot holes on a validation pool, so their
    verdicts hold for every corpus; a fabula-entropy reader is checked on each corpus's own
    controls and judged there."""
    family = measure.split(".", 1)[0]
    if not model or family not in ("tension", "fabula_entropy", "plot_holes"):
        return NOT_CHECKED, ""
    if family == "tension":
        if measure == "tension.pmi":
            return NOT_CHECKED, ""
        judge = measure.rsplit(".", 1)[1]
        passed, failed = tension_labels(table, model, judge)
        return (VALID, "") if passed else (FAILED, failed)
    if family == "fabula_entropy":
        return _fabula_entropy(table, corpus, model)
    key = f"surprisal:{model}" if measure == "plot_holes.surprisal_f_minus_d" else model
    checked = verdict_of(table)
    if key not in checked:
        return NOT_CHECKED, ""
    passed, failed = checked[key]
    return (VALID, "") if passed else (FAILED, f"{key} {failed}")


def measure_verdicts(measures: pd.DataFrame, validity: pd.DataFrame, corpus: str) -> pd.DataFrame:
    """:data:`storyflow.tables.MEASURE_VERDICTS`: one row per (measure, model) of the corpus's
    :data:`storyflow.tables.STORY_MEASURES` rows, with its verdict and failed checks."""
    pairs = measures[["measure", "model"]].drop_duplicates().sort_values(["measure", "model"])
    rows = []
    for pair in pairs.itertuples(index=False):
        decided, failed = verdict(validity, corpus, str(pair.measure), str(pair.model))
        rows.append(
            tables.MEASURE_VERDICTS.row(
                measure=pair.measure, model=pair.model, verdict=decided, failed=failed
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
