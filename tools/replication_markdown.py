"""A run's replication table as the Markdown table docs/replication.md shows ("Measured").

    .venv/bin/python tools/replication_markdown.py RESULTS/replication/<paper>.csv [--all]
    .venv/bin/python tools/replication_markdown.py RESULTS/replication/<paper>.csv --decide
    .venv/bin/python tools/replication_markdown.py RESULTS/replication/<paper>.csv --tally

One line per computed row (``--all``: every row): the figure and its line, the published value
or direction (with the paper's per-model range of a mean row), ours with its interval, what it
rests on, the validity verdict, the verdict with its reason (and which per-model values our
interval holds), and whether our interval covers the published value. ``--decide``: one line
per inconclusive finding (:func:`storyflow.replication.summary.findings`, as the tallies count
them) and per small-telescopes reading: units per group to decide, what
deciding means, d33, its NLL cost. ``--tally``: the counts the "Measured" tally tables give
(:func:`storyflow.replication.summary.tally`).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.replication.judging import INCONCLUSIVE, computed
from storyflow.replication.summary import findings, tally
from storyflow.replication.words import number


def _published(row: dict) -> str:
    value = float(row["published"])
    text = number(value) if math.isfinite(value) else str(row["published_direction"])
    if row.get("paper_models"):
        text += f" (models {number(float(row['paper_min']))} to {number(float(row['paper_max']))})"
    return text


def _ours(row: dict) -> str:
    value, low, high = (float(row[c]) for c in ("ours", "ci_low", "ci_high"))
    if row["claim_type"] == "none significant" and math.isfinite(value):
        return str(row["ours_direction"])
    if row["claim_type"] == "significant" and math.isfinite(value):
        return f"p_fdr = {number(value)} ({row['ours_direction']})"
    if not math.isfinite(value):
        return str(row["ours_direction"] or "not computed")
    interval = f" [{number(low)}, {number(high)}]" if math.isfinite(low) else ""
    return f"{number(value)}{interval}"


#: The table's columns.
HEADER = (
    "figure (line)",
    "published",
    "ours [95% CI]",
    "n",
    "models",
    "validity",
    "verdict",
    "CI covers",
)


def _cells(row: dict) -> list[object]:
    """A replication row's cells, in the columns of :data:`HEADER`."""
    line = str(row["source"]).split(" l. ", 1)[-1]
    return [
        f"{row['id']} (l. {line})",
        _published(row),
        _ours(row),
        row["n"],
        row["models"],
        row["validity"],
        f"**{row['verdict']}**: {row['reason']}" + _held(row),
        row["ci_covers"],
    ]


def _held(row: dict) -> str:
    """What the verdict cell adds for a mean row (the paper's per-model values our interval
    holds) and for a row re-using an earlier row's estimate."""
    held = str(row.get("holds_paper_models") or "")
    text = f"; holds the paper's {held}" if held and held != "none" else ""
    text += "; holds none of the paper's per-model values" if held == "none" else ""
    same = str(row.get("same_estimate_as") or "")
    return text + (f" (the estimate of {same})" if same else "")


#: The columns of the ``--decide`` table.
DECIDE = ("figure", "verdict", "ours [95% CI]", "units now",
          "units per group to decide (range over the interval)",
          "deciding means", "NLL tokens", "hours here", "hours on one GPU", "d33",
          "small telescopes")  # fmt: skip


def _count(value: object) -> str:
    value = float(value)  # type: ignore[arg-type]
    return f"{value:,.0f}" if math.isfinite(value) else "–"


def _needed(row: dict) -> str:
    """Units per group to decide, with their range over the interval ('no bound': some value
    in it is decided by no sample)."""
    low, high = (
        float(row.get("n_to_decide_min", math.nan)),
        float(row.get("n_to_decide_max", math.nan)),
    )
    if math.isnan(low):
        return _count(row["n_to_decide"])
    top = "no bound" if math.isinf(high) else _count(high)
    return f"{_count(row['n_to_decide'])} ({_count(low)} to {top})"


def _decide_cells(row: dict) -> list[object]:
    hours = [f"{float(row[c]):,.2f}" if math.isfinite(float(row[c])) else "–"
             for c in ("decide_hours_cpu", "decide_hours_gpu")]  # fmt: skip
    d33 = float(row["d33"])
    return [
        row["id"], row["verdict"], _ours(row), _count(row["units"]), _needed(row),
        row["to_decide"] or "–", _count(row["decide_tokens"]), *hours,
        number(d33) if math.isfinite(d33) else "–", row["small_telescopes"] or "–",
    ]  # fmt: skip


def decide_markdown(path: Path) -> str:
    """The ``--decide`` table: each independent finding that is inconclusive or has a
    small-telescopes reading."""
    frame = findings(_read(path))
    frame = frame[frame["verdict"].eq(INCONCLUSIVE) | frame["d33"].notna()]
    if frame.empty:
        return "(no inconclusive finding, no small-telescopes reading)"
    return markdown_table(DECIDE, [_decide_cells(row) for row in frame.to_dict("records")])


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table: the ``header`` line, its rule, one line per row (cells as text)."""

    def line(cells: Sequence[object]) -> str:
        return "| " + " | ".join(str(cell) for cell in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])


#: Text columns, read back as float when empty.
TEXT = ("published_direction", "ours_direction", "n", "models", "validity", "reason",
        "paper_models", "holds_paper_models", "same_estimate_as", "to_decide",
        "small_telescopes")  # fmt: skip


def _read(path: Path) -> pd.DataFrame:
    frame = tables.read(tables.REPLICATION, path)
    cells = frame[[*TEXT, "ci_covers"]].astype(object)
    return frame.assign(**cells.fillna({c: "" for c in TEXT} | {"ci_covers": "n/a"}))


def markdown(path: Path, every: bool = False) -> str:
    """The Markdown table of the replication table at ``path``."""
    frame = _read(path)
    if not every:
        frame = frame[computed(frame)]
    if frame.empty:
        return "(no row computed)"
    return markdown_table(HEADER, [_cells(row) for row in frame.to_dict("records")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", type=Path)
    parser.add_argument("--all", action="store_true", help="rows not computed too")
    parser.add_argument("--decide", action="store_true", help="what it would take to decide")
    parser.add_argument("--tally", action="store_true", help="its counts, findings by verdict")
    args = parser.parse_args()
    if args.tally:
        print(tally(_read(args.table)))
    else:
        print(decide_markdown(args.table) if args.decide else markdown(args.table, args.all))


if __name__ == "__main__":
    main()
