"""The verdict on a tension story measure (the comparison's ``measure_verdicts``)."""

from __future__ import annotations

import pandas as pd

from storyflow.measures.tension.validity import labels
from storyflow.validity import FAILED, NOT_CHECKED, VALID

#: The story measure of the PMI baseline: a likelihood, which no check covers.
PMI_MEASURE = "tension.pmi"


def verdict(table: pd.DataFrame, corpus: str, measure: str, model: str) -> tuple[str, str]:
    """(verdict, failed checks in words) of the no-rate ``measure`` (``tension.<judge>``) of
    forecaster ``model``, from the validity ``table``: valid when the forecaster and the judge
    passed their checks (:func:`storyflow.measures.tension.validity.labels`). The checks run on
    ROCStories and hold for every ``corpus``."""
    if measure == PMI_MEASURE:
        return NOT_CHECKED, ""
    judge = measure.rsplit(".", 1)[1]
    passed, failed = labels(table, model, judge)
    return (VALID, "") if passed else (FAILED, failed)
