"""What a replication row is read beside: the other values of its column in the paper's table,
the paper's per-model values behind a mean over its models, and the rows that re-use one of
our estimates (one finding, however many published rows it is compared with).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from storyflow.replication.words import number

#: Published ``model`` values that stand for the mean over the paper's models.
MEAN_MODELS = ("mean", "mean-instruct", "Inst Mean")
#: The columns that identify one of our estimates: rows equal on all of them re-use it.
ESTIMATE = ("ours", "ci_low", "ci_high", "ours_direction", "models", "n")


def label(row: Mapping[str, object], other: Mapping[str, object]) -> str:
    """How ``row``'s reason names a competing row ``other`` of the same column: by its model
    where only the model tells them apart (or names the group too), by its group where only
    the group does, else by the last part of its id (``gpt-4o-with-cot``)."""
    group, model = str(other["group"]), str(other["model"])
    same_setting = str(other["setting"]) == str(row["setting"])
    if same_setting and (group == model or group == str(row["group"])):
        return model
    if same_setting and model == str(row["model"]):
        return group
    return str(other["id"]).rsplit(".", 1)[-1]


def _figure(frame: pd.DataFrame) -> pd.Series:
    """The key of a published figure: the same quantity, setting and group, in the same table
    (the id's first part), whichever model."""
    table = frame["id"].astype(str).str.split(".").str[0]
    return table + "|" + frame["quantity"] + "|" + frame["setting"] + "|" + frame["group"]


def with_paper_models(frame: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (replication rows) with ``paper_models``, ``paper_min``, ``paper_max`` and
    ``holds_paper_models`` on each row of a mean over the paper's models: the paper's
    per-model values of the same figure, their range, and which of them our interval holds
    ('none' when it holds none; '' without an interval)."""
    figure = _figure(published)
    per_model = published[~published["model"].isin(MEAN_MODELS) & published["value"].notna()]
    values = {
        key: list(zip(part["model"], part["value"], strict=True))
        for key, part in per_model.groupby(figure[per_model.index])
    }
    out = frame.assign(paper_models="", paper_min=math.nan, paper_max=math.nan,
                       holds_paper_models="")  # fmt: skip
    keys = _figure(published.set_index("id").loc[frame["id"]].reset_index())
    for i, key in zip(frame.index, keys, strict=True):
        if frame.at[i, "paper_model"] not in MEAN_MODELS or key not in values:
            continue
        models = values[key]
        low, high = frame.at[i, "ci_low"], frame.at[i, "ci_high"]
        out.at[i, "paper_models"] = ", ".join(f"{m} {number(v)}" for m, v in models)
        out.at[i, "paper_min"] = min(v for _, v in models)
        out.at[i, "paper_max"] = max(v for _, v in models)
        if math.isfinite(low) and math.isfinite(high):
            held = [f"{m} {number(v)}" for m, v in models if low <= v <= high]
            out.at[i, "holds_paper_models"] = ", ".join(held) or "none"
    return out


def same_estimate_as(frame: pd.DataFrame) -> pd.Series:
    """For each row that re-uses an estimate of an earlier row (the same value, interval,
    models and n: §5.1's mean is Table A1's), that row's id; '' for the first of each."""
    done = frame["ours"].notna()
    key = frame[list(ESTIMATE)].map(repr).agg("|".join, axis=1)
    first = frame[done].groupby(key[done])["id"].transform("first")
    out = pd.Series("", index=frame.index, dtype=object)
    out[done] = first.where(first != frame.loc[done, "id"], "")
    return out
