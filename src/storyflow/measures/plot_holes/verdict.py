"""The verdict on a plot-hole story measure (the comparison's ``measure_verdicts``)."""

from __future__ import annotations

import pandas as pd

from storyflow.measures.plot_holes.validation import verdict_of
from storyflow.validity import FAILED, NOT_CHECKED, VALID

#: The story measure of the surprisal baseline, whose check is its own (``surprisal:<model>``).
SURPRISAL_MEASURE = "plot_holes.surprisal_f_minus_d"


def verdict(table: pd.DataFrame, corpus: str, measure: str, model: str) -> tuple[str, str]:
    """(verdict, failed checks in words) of plot-hole ``measure`` with detector ``model``, from
    the validity ``table``: the detector's checks on the validation pool
    (:func:`storyflow.measures.plot_holes.validation.verdict_of`), which hold for every
    ``corpus``."""
    key = f"surprisal:{model}" if measure == SURPRISAL_MEASURE else model
    checked = verdict_of(table)
    if key not in checked:
        return NOT_CHECKED, ""
    passed, failed = checked[key]
    return (VALID, "") if passed else (FAILED, f"{key} {failed}")
