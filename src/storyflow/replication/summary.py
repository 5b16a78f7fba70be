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
)
from storyflow.replication.context import MEAN_MODELS
from storyflow.replication.words import number

#: Most rows per paper in the first page's table (the rest are in its CSV).
SUMMARY_ROWS = 20
#: The text columns of a replication table that may be empty (NaN once read back from CSV).
TEXT = (
    "ours_direction", "paper_model", "models", "n", "validity", "note", "paper_models",
    "holds_paper_models", "same_estimate_as", "small_telescopes", "to_decide",
)  # fmt: skip
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
    verdict = f"{r['verdict']}: {r['reason']}"
    if r.get("paper_models"):
        published = (
            f"{published} (per model {number(float(r['paper_min']))} to "  # type: ignore[arg-type]
            f"{number(float(r['paper_max']))})"  # type: ignore[arg-type]
        )
        holds = str(r.get("holds_paper_models") or "")
        if holds == "none":
            verdict += "; it holds none of the paper's per-model values"
        elif holds:
            verdict += f"; it holds the paper's {holds}"
    if r.get("same_estimate_as"):
        verdict += f" (the same estimate as {r['same_estimate_as']})"
    return {
        "figure": f"{r['id']} ({_place(str(r['source']))})",
        "published": published,
        "ours": f"{ours} ({rests})" if rests else ours,
        "verdict": verdict,
    }


def findings(frame: pd.DataFrame) -> pd.DataFrame:
    """The judged rows, each of our estimates once (a row that re-uses an earlier row's
    estimate, ``same_estimate_as``, is the same finding: §5.1's mean is Table A1's)."""
    rows = frame[judged(frame)]
    return rows[
        rows["same_estimate_as"].fillna("").eq("") | ~rows["same_estimate_as"].isin(rows["id"])
    ]


def tally(frame: pd.DataFrame) -> str:
    """How many rows were computed and judged, how many independent findings those are, and
    the verdicts of the findings."""
    done = computed(frame)
    distinct = findings(frame)
    verdicts = distinct["verdict"].value_counts()
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
        f"{int(judged(frame).sum())} judged, {len(distinct)} independent findings: "
        f"{counts}{left}"
    )


def _hours(hours: float) -> str:
    return f"{hours * 60:.0f} min" if hours < 1 else f"{hours:.1f} h"


def to_decide(frame: pd.DataFrame, rates: Mapping[str, float] | None = None) -> str:
    """One sentence on what it would take to decide the inconclusive findings: units per group
    at our estimates, the NLL cost of the largest, and those no sample decides; and the
    small-telescopes count of the judged effect findings ('' when none is inconclusive)."""
    distinct = findings(frame)
    open_ = distinct[distinct["verdict"].eq(INCONCLUSIVE)]
    if open_.empty:
        return ""
    sized = open_[open_["n_to_decide"].notna()]
    parts = []
    if len(sized):
        n = sized["n_to_decide"]
        parts.append(
            f"deciding {len(sized)} of its {len(open_)} inconclusive findings would take "
            f"{n.min():,.0f} to {n.max():,.0f} units per group at our estimates and spread "
            f"(median {n.median():,.0f}; units: {', '.join(sorted(set(_unit(sized))))})"
        )
        priced = sized[sized["decide_tokens"].notna()]
        if len(priced):
            largest = priced.loc[priced["n_to_decide"].idxmax()]
            cpu, gpu = (rates or {}).get("cpu"), (rates or {}).get("gpu")
            at = (
                f": {_hours(largest['decide_hours_cpu'])} at {cpu:,.0f} tokens/s here, "
                f"{_hours(largest['decide_hours_gpu'])} at {gpu:,.0f} on one GPU"
                if cpu and gpu
                else ""
            )
            parts.append(
                f"the largest ({largest['id']}) is {largest['decide_tokens'] / 1e6:,.1f} million "
                f"NLL tokens{at}"
            )
    undecided = len(open_) - len(sized)
    if undecided:
        parts.append(f"{undecided} cannot be decided by more of the same sample")
    telescopes = distinct[distinct["d33"].notna()]
    if len(telescopes):
        below = int(telescopes["small_telescopes"].str.contains("excludes").sum())
        parts.append(
            f"small telescopes: {below} of {len(telescopes)} effect findings exclude d33, the "
            "effect the original sample had 33% power to detect"
        )
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + " (results/replication/, docs/replication.md)."


def _unit(rows: pd.DataFrame) -> pd.Series:
    """The unit each row's n_to_decide counts, read from its ``n`` (stories, books, prompts)."""
    return (
        rows["n"]
        .str.extract(r"(stories|books|prompts|story versions)$", expand=False)
        .fillna("stories")
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
    replicated: Mapping[str, pd.DataFrame],
    titles: Mapping[str, str],
    confidence: float,
    rates: Mapping[str, float] | None = None,
) -> list[dict[str, object]]:
    """Per paper: ``title``, ``head`` (:func:`tally` and the table's path), ``decide``
    (:func:`to_decide`, at ``rates``), ``header`` (the table's column titles) and ``rows``
    (:func:`cells` of the :func:`headline` rows, at most :data:`SUMMARY_ROWS`, escaped for
    reStructuredText), and ``more`` (rows left to the CSV)."""
    header = {**COLUMNS, "ours": f"ours [{confidence:.0%} CI] (models, n)"}
    out: list[dict[str, object]] = []
    for paper, frame in replicated.items():
        frame = frame.assign(
            **{c: frame[c].astype(object).where(frame[c].notna(), "") for c in TEXT}
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
                "decide": rst_text(to_decide(frame, rates)),
                "header": header,
                "rows": rows,
                "more": f"{more} more in the CSV." if more else "",
            }
        )
    return out


def summary_of(
    paths: Mapping[str, str],
    titles: Mapping[str, str],
    confidence: float,
    rates: Mapping[str, float] | None = None,
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
    return summary(found, titles, confidence, rates) if found else []
