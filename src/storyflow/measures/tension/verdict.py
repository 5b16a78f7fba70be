"""The verdict on a tension story measure (the comparison's ``measure_verdicts``) and the
validity labels of tension's tables, read from the validity table that
:mod:`storyflow.measures.tension.validity` writes."""

from __future__ import annotations

import pandas as pd

from storyflow.validity import FAILED, NOT_CHECKED, VALID

#: The measure's name in the validity table (:data:`storyflow.tables.VALIDITY`).
MEASURE = "tension"
#: The story measure of the PMI baseline: a likelihood, which no check covers.
PMI_MEASURE = "tension.pmi"


def verdict(table: pd.DataFrame, corpus: str, measure: str, model: str) -> tuple[str, str]:
    """(verdict, failed checks in words) of the no-rate ``measure`` (``tension.<judge>``) of
    forecaster ``model``, from the validity ``table``: valid when the forecaster and the judge
    passed their checks (:func:`labels`). The checks run on ROCStories and hold for every
    ``corpus``."""
    if measure == PMI_MEASURE:
        return NOT_CHECKED, ""
    judge = measure.rsplit(".", 1)[1]
    passed, failed = labels(table, model, judge)
    return (VALID, "") if passed else (FAILED, failed)


def labels(table: pd.DataFrame, forecaster: str, judge: str) -> tuple[bool, str]:
    """Whether the results of ``forecaster`` judged by ``judge`` rest on models that passed
    their checks (``table``: the forecasters' validity tables), and the failed checks in words
    (e.g. ``"forecaster pairwise_accuracy; judge embedding balanced_accuracy"``; a role with no
    check row counts as failed: ``"judge embedding not checked"``)."""
    mine = table[table["measure"] == MEASURE]
    own = mine[(mine["role"] == "forecaster") & (mine["model"] == forecaster)]
    suffix = f"[{forecaster}]"
    judged = mine[
        (mine["role"] == "judge")
        & (mine["model"] == judge)
        & mine["check"].astype(str).str.endswith(suffix)
    ]
    failed = []
    for role, name, rows in (("forecaster", forecaster, own), ("judge", judge, judged)):
        if rows.empty:
            failed.append(f"{role} {name} not checked")
            continue
        bad = [str(c).removesuffix(suffix) for c in rows.loc[~rows["passed"], "check"]]
        if bad:
            failed.append(f"{role} {name} {', '.join(bad)}")
    return not failed, "; ".join(failed)


def label_frame(frame: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (rows with ``model`` = forecaster and ``judge``) with ``valid`` and
    ``failed`` columns from the validity ``table`` (:func:`labels`)."""
    verdicts = {
        key: labels(table, *key)
        for key in dict.fromkeys(zip(frame["model"], frame["judge"], strict=True))
    }
    pairs = list(zip(frame["model"], frame["judge"], strict=True))
    return frame.assign(
        valid=[verdicts[p][0] for p in pairs], failed=[verdicts[p][1] for p in pairs]
    )
