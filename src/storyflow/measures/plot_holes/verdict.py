"""The verdict on a plot-hole story measure (the comparison's ``measure_verdicts``) and each
detector's validity label, read from the validity table that
:mod:`storyflow.measures.plot_holes.validation` writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from storyflow import validity
from storyflow.validity import FAILED, NOT_CHECKED, VALID

#: The measure's name in the validity table (:data:`storyflow.tables.VALIDITY`).
MEASURE = "plot_holes"
#: The story measure of the surprisal baseline, whose check is its own (``surprisal:<model>``).
SURPRISAL_MEASURE = "plot_holes.surprisal_f_minus_d"


def verdict(table: pd.DataFrame, corpus: str, measure: str, model: str) -> tuple[str, str]:
    """(verdict, failed checks in words) of plot-hole ``measure`` with detector ``model``, from
    the validity ``table``: the detector's checks on the validation pool (:func:`verdict_of`),
    which hold for every ``corpus``."""
    key = f"surprisal:{model}" if measure == SURPRISAL_MEASURE else model
    checked = verdict_of(table)
    if key not in checked:
        return NOT_CHECKED, ""
    passed, failed = checked[key]
    return (VALID, "") if passed else (FAILED, f"{key} {failed}")


def verdict_of(table: pd.DataFrame) -> dict[str, tuple[bool, str]]:
    """Detector name as in the answers (``model``, ``nli:model``, ``surprisal:model``) →
    (passed, the failed checks joined by ", ") from the plot-hole rows of a VALIDITY table
    (:func:`storyflow.validity.verdicts`; the checks are all of corpus ``all``)."""
    rows = validity.verdicts(table[table["measure"] == MEASURE])
    return {
        model if role == "detector" else f"{role}:{model}": (bool(passed), failed)
        for role, model, passed, failed in zip(
            rows["role"], rows["model"], rows["passed"], rows["failed"], strict=True
        )
    }


def label(detector: str, verdicts: Mapping[str, tuple[bool, str]]) -> tuple[Any, str]:
    """(``valid``: True, False, or None when not checked; ``validity``: ``passed``,
    ``failed: <checks>`` or ``not checked (<why>)``) of one detector."""
    if detector.startswith("baseline:"):
        return None, "not checked (a baseline: the reference)"
    if detector not in verdicts:
        return None, "not checked (no controlled pairs)"
    passed, failed = verdicts[detector]
    return passed, "passed" if passed else f"failed: {failed}"
