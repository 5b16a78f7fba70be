"""What a replication row is read beside: the other values of its column in the paper's table,
the paper's per-model values behind a mean over its models, and the rows that re-use one of
our estimates (one finding, however many published rows it is compared with).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from storyflow.replication.published import half_unit
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


def _of_a_table(frame: pd.DataFrame) -> pd.Series:
    """Whether each row is printed in one of the paper's tables (its source names a table),
    not read in a sentence (§5.1's min and max, §5.2's two Qwen values)."""
    return frame["source"].astype(str).str.contains("(Table ", regex=False)


def paper_models(published: pd.DataFrame) -> dict[str, list[tuple[str, object]]]:
    """For each row of a mean over the paper's models, by id: the (model, value) of every
    per-model cell the paper printed for the models it averaged, in file order; rows without
    such cells are left out. A table's mean is read beside its table's cells of the same
    figure. A sentence's reading of a table's mean (§5.2's 0.07 is Table A1's 0.0669) is read
    beside that table's cells: those of the table row with its quantity, setting, group and
    model. A sentence's own readings of single models (§5.1's min and max, §5.2's Qwen values)
    are not the models the paper averaged, so no mean is read beside them. ``value`` is as
    ``published`` has it (a number, or the printed text)."""
    figure = _figure(published)
    table = _of_a_table(published)
    mean = published["model"].isin(MEAN_MODELS)
    valued = published["value"].astype(str).str.strip().ne("") & published["value"].notna()
    cells = published[table & ~mean & valued]
    by_figure = {
        key: list(zip(part["model"], part["value"], strict=True))
        for key, part in cells.groupby(figure[cells.index], sort=False)
    }
    reading = published["quantity"] + "|" + published["setting"] + "|" + published["group"]
    reading = reading + "|" + published["model"]
    tables_of = figure[table & mean].groupby(reading[table & mean]).unique()
    out: dict[str, list[tuple[str, object]]] = {}
    for i in published.index[mean]:
        key = figure[i]
        if not table[i]:
            read = tables_of.get(reading[i])
            if read is None or len(read) != 1:  # no table's mean, or two: not read beside any
                continue
            key = read[0]
        if key in by_figure:
            out[str(published.at[i, "id"])] = by_figure[key]
    return out


def with_paper_models(frame: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (replication rows) with ``paper_models``, ``paper_min``, ``paper_max`` and
    ``holds_paper_models`` on each row of a mean over the paper's models: the paper's
    per-model values of the same figure (:func:`paper_models`), their range, and which of them
    our interval holds ('none' when it holds none; '' without an interval). A mean outside
    its cells' range is not a mean of them (Table A7's retold context-only -0.025 beside the
    two of its five cells l. 360 prints): such a row is left without them."""
    per_model = paper_models(published)
    means = dict(zip(published["id"], published["value"], strict=True))
    out = frame.assign(paper_models="", paper_min=math.nan, paper_max=math.nan,
                       holds_paper_models="")  # fmt: skip
    for i in frame.index:
        cells = per_model.get(str(frame.at[i, "id"]))
        if frame.at[i, "paper_model"] not in MEAN_MODELS or not cells:
            continue
        models = [(m, float(v)) for m, v in cells]  # type: ignore[arg-type]
        values = [v for _, v in models]
        mean = float(means[frame.at[i, "id"]])
        if math.isfinite(mean) and not min(values) <= mean <= max(values):
            continue
        low, high = frame.at[i, "ci_low"], frame.at[i, "ci_high"]
        out.at[i, "paper_models"] = ", ".join(f"{m} {number(v)}" for m, v in models)
        out.at[i, "paper_min"] = min(values)
        out.at[i, "paper_max"] = max(values)
        if math.isfinite(low) and math.isfinite(high):
            held = [f"{m} {number(v)}" for m, v in models if low <= v <= high]
            out.at[i, "holds_paper_models"] = ", ".join(held) or "none"
    return out


def mean_gaps(printed: pd.DataFrame) -> pd.DataFrame:
    """The rows of a mean over the paper's models whose per-model cells (:func:`paper_models`)
    do not average to it within the paper's rounding, from a published file as printed (its
    values as text, ``dtype=str``): each cell is off its true value by at most half a unit of
    its last printed digit, so their mean by at most the largest such half unit, and the
    printed mean by half a unit of its own. A row beyond both lists models the paper did not
    average, or misses some it did. Columns: id, published (the printed mean), models (how
    many cells), their_mean, gap (their_mean - published), tolerance."""
    printed = printed.astype({"value": str})
    means = dict(zip(printed["id"], printed["value"], strict=True))
    rows = []
    for row_id, models in paper_models(printed).items():
        shown = str(means[row_id]).strip()
        if not shown:
            continue  # a direction only: no mean to average to
        values = [float(str(v)) for _, v in models]
        their_mean = sum(values) / len(values)
        tolerance = half_unit(shown) + max(half_unit(str(v)) for _, v in models)
        gap = their_mean - float(shown)
        if abs(gap) > tolerance + 1e-12:
            rows.append((row_id, shown, len(values), their_mean, gap, tolerance))
    return pd.DataFrame(
        rows, columns=["id", "published", "models", "their_mean", "gap", "tolerance"]
    )


def same_estimate_as(frame: pd.DataFrame) -> pd.Series:
    """For each row that re-uses an estimate of an earlier row (the same value, interval,
    models and n: §5.1's mean is Table A1's), that row's id; '' for the first of each."""
    done = frame["ours"].notna()
    key = frame[list(ESTIMATE)].map(repr).agg("|".join, axis=1)
    first = frame[done].groupby(key[done])["id"].transform("first")
    out = pd.Series("", index=frame.index, dtype=object)
    out[done] = first.where(first != frame.loc[done, "id"], "")
    return out
