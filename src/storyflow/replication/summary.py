"""The replication tables as the report's first page shows them: per paper one line of tallies
(judged rows only) and a compact table of its headline rows, every verdict in words."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.replication.agreement import (
    AGREES,
    DISAGREES,
    INCONCLUSIVE,
    computed,
    judged,
    number,
)

#: Most rows per paper in the first page's table (the rest are in its CSV).
SUMMARY_ROWS = 20
#: Published ``model`` values that stand for the mean over the paper's models: where a figure
#: has one, the page shows it and not the per-model rows of the same figure.
MEAN_MODELS = ("mean", "mean-instruct", "Inst Mean")
#: The columns of the first page's table, by key.
COLUMNS = {"figure": "figure", "published": "published", "ours": "ours", "verdict": "verdict"}


def rst_text(text: str) -> str:
    """``text`` as literal reStructuredText inside a table cell: inline markup escaped, and a
    leading bullet or enumerator ("- a", "12. b") kept from starting a list."""
    escaped = re.sub(r"([\\*`|_])", r"\\\1", str(text))
    escaped = re.sub(r"^(\d+|[a-zA-Z#])\.(\s|$)", r"\1\\.\2", escaped)
    return re.sub(r"^([-+•])(\s|$)", r"\\\1\2", escaped)


def _place(source: str) -> str:
    """``fiction_flows.txt l. 309 (Table A1)`` as ``Table A1, l. 309``."""
    line = source.split(" ", 1)[1].split(" (")[0] if " " in source else source
    where = source[source.index("(") + 1 : source.rindex(")")] if "(" in source else ""
    return f"{where}, {line}" if where else line


def cells(r: Mapping[str, object], confidence: float) -> dict[str, str]:
    """One replication row as the first page's table cells (plain text, not yet escaped)."""
    value = float(r["published"])  # type: ignore[arg-type]
    model = str(r["paper_model"] or "")
    published = number(value) if math.isfinite(value) else str(r["published_direction"])
    if model and model not in MEAN_MODELS:
        published = f"{published} ({model})"
    ours_value = float(r["ours"])  # type: ignore[arg-type]
    low, high = float(r["ci_low"]), float(r["ci_high"])  # type: ignore[arg-type]
    if r["claim_type"] == "none significant" and math.isfinite(ours_value):
        ours = str(r["ours_direction"])  # the smallest p and its covariate
    elif r["claim_type"] == "significant" and math.isfinite(ours_value):
        ours = f"p_fdr = {number(ours_value)}"
    elif math.isfinite(ours_value):
        interval = (
            f" [{number(low)}, {number(high)}]"
            if math.isfinite(low) and math.isfinite(high)
            else ""
        )
        ours = f"{number(ours_value)}{interval}"
    else:
        ours = str(r["ours_direction"] or "not computed")
    rests = ", ".join(str(x) for x in (r["models"], r["n"]) if x)
    return {
        "figure": f"{r['id']} ({_place(str(r['source']))})",
        "published": published,
        "ours": f"{ours} ({rests})" if rests else ours,
        "verdict": f"{r['verdict']}: {r['reason']}",
    }


def tally(frame: pd.DataFrame) -> str:
    """How many rows were computed and judged, and the verdicts of the judged ones."""
    done = computed(frame)
    verdicts = frame.loc[judged(frame), "verdict"].value_counts()
    unjudged = frame[done & ~judged(frame)]
    failed = int(unjudged["validity"].fillna("").str.startswith("failed").sum())
    counts = ", ".join(f"{verdict} {int(verdicts.get(verdict, 0))}" for verdict in
                       (AGREES, DISAGREES, INCONCLUSIVE))  # fmt: skip
    left = (
        f"; {len(unjudged)} computed but not judged ({failed} on a failed check)"
        if len(unjudged)
        else ""
    )
    return (
        f"{int(done.sum())} of {len(frame)} published figures computed, "
        f"{int(judged(frame).sum())} judged: {counts}{left}"
    )


def headline(frame: pd.DataFrame) -> pd.DataFrame:
    """The computed rows the first page shows: a figure's mean over the paper's models where the
    paper gives one (its per-model rows are in the CSV), each figure once, judged rows first."""
    done = frame[computed(frame)]
    figure = ["quantity", "setting", "group"]
    has_mean = done.groupby(figure, dropna=False)["paper_model"].transform(
        lambda models: models.isin(MEAN_MODELS).any()
    )
    shown = done[~has_mean | done["paper_model"].isin(MEAN_MODELS)]
    shown = shown.drop_duplicates([*figure, "paper_model"])
    order = (~judged(shown)).astype(int)
    return shown.assign(_order=order).sort_values("_order", kind="stable").drop(columns="_order")


def summary(
    replicated: Mapping[str, pd.DataFrame], titles: Mapping[str, str], confidence: float
) -> list[dict[str, object]]:
    """Per paper: ``title``, ``head`` (:func:`tally` and the table's path), ``header`` (the
    table's column titles) and ``rows`` (:func:`cells` of the :func:`headline` rows, at most
    :data:`SUMMARY_ROWS`, escaped for reStructuredText), and ``more`` (rows left to the CSV)."""
    header = {**COLUMNS, "ours": f"ours [{confidence:.0%} CI] (models, n)"}
    out: list[dict[str, object]] = []
    for paper, frame in replicated.items():
        frame = frame.fillna(
            {c: "" for c in ("ours_direction", "paper_model", "models", "n", "validity", "note")}
        )
        shown = headline(frame)
        rows = [
            {k: rst_text(v) for k, v in cells(r, confidence).items()}
            for r in shown.head(SUMMARY_ROWS).to_dict("records")
        ]
        more = max(0, len(shown) - SUMMARY_ROWS)
        out.append(
            {
                "title": rst_text(titles.get(paper, paper)),
                "head": rst_text(f"{tally(frame)} (results/replication/{paper}.csv)."),
                "header": header,
                "rows": rows,
                "more": f"{more} more in the CSV." if more else "",
            }
        )
    return out


def summary_of(
    paths: Mapping[str, str], titles: Mapping[str, str], confidence: float
) -> list[dict[str, object]]:
    """:func:`summary` of the replication tables at ``paths`` (by paper) that exist; [] before
    the first run. A table an older storyflow wrote (other columns) is left out: the workflow
    reads this at parse time, for the report, and rule compare_with_paper writes it anew."""
    found = {}
    for paper, path in paths.items():
        if Path(path).is_file():
            try:
                found[paper] = tables.read(tables.REPLICATION, path)
            except tables.TableError:
                continue
    return summary(found, titles, confidence) if found else []
