"""A run's replication table as the Markdown table docs/replication.md shows ("Measured").

    .venv/bin/python tools/replication_markdown.py RESULTS/replication/<paper>.csv [--all]

One line per computed row (``--all``: every row): the figure and its line, the published value
or direction, ours with its interval, what it rests on, the validity verdict, the verdict with
its reason, and whether our interval covers the published value.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from storyflow import tables
from storyflow.replication.agreement import computed
from storyflow.replication.words import number


def _published(row: dict) -> str:
    value = float(row["published"])
    return number(value) if math.isfinite(value) else str(row["published_direction"])


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
        f"**{row['verdict']}**: {row['reason']}",
        row["ci_covers"],
    ]


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table: the ``header`` line, its rule, one line per row (cells as text)."""

    def line(cells: Sequence[object]) -> str:
        return "| " + " | ".join(str(cell) for cell in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])


def markdown(path: Path, every: bool = False) -> str:
    """The Markdown table of the replication table at ``path``."""
    frame = tables.read(tables.REPLICATION, path)
    if not every:
        frame = frame[computed(frame)]
    if frame.empty:
        return "(no row computed)"
    text = ["published_direction", "ours_direction", "n", "models", "validity", "reason"]
    cells = frame[[*text, "ci_covers"]].astype(object)  # empty columns are read as float
    frame = frame.assign(**cells.fillna({c: "" for c in text} | {"ci_covers": "n/a"}))
    return markdown_table(HEADER, [_cells(row) for row in frame.to_dict("records")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", type=Path)
    parser.add_argument("--all", action="store_true", help="rows not computed too")
    args = parser.parse_args()
    print(markdown(args.table, args.all))


if __name__ == "__main__":
    main()
