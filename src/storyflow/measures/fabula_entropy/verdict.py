"""The verdict on a fabula-entropy story measure (the comparison's ``measure_verdicts``), read
from the reader checks that :mod:`storyflow.measures.fabula_entropy.compare` writes."""

from __future__ import annotations

import pandas as pd

from storyflow.validity import FAILED, NOT_CHECKED, VALID

#: The measure's name in the validity table (:data:`storyflow.tables.VALIDITY`).
MEASURE = "fabula_entropy"


def verdict(table: pd.DataFrame, corpus: str, measure: str, model: str) -> tuple[str, str]:
    """(verdict, failed checks in words) of a fabula-entropy index of ``corpus`` read by
    ``model``: a reader (``model/variant``), a model (its variants pooled: valid when every
    variant passed), ``pooled`` (built from valid readers only: valid) or ``human`` (not
    checked). A reader is checked on each corpus's own controls, so the verdict is per corpus.
    ``measure`` is any of the stage's story measures: they share the verdict."""
    if model == "human":
        return NOT_CHECKED, ""
    if model == "pooled":
        return VALID, ""
    mine = table[(table["measure"] == MEASURE) & (table["corpus"] == corpus)]
    readers = mine[(mine["model"] == model) | mine["model"].astype(str).str.startswith(f"{model}/")]
    if readers.empty:
        return NOT_CHECKED, ""
    bad = readers[~readers["passed"]]
    if bad.empty:
        return VALID, ""
    return FAILED, "; ".join(
        f"reader {m} {c}" for m, c in zip(bad["model"], bad["check"], strict=True)
    )
