"""The papers' published figures (src/storyflow/data/published/<paper>.csv), read and checked."""

from __future__ import annotations

import math
from decimal import Decimal
from importlib import resources
from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError

#: The columns of a published file as written (:data:`storyflow.tables.PUBLISHED` but the
#: ``precision`` :func:`read` adds).
PRINTED = [c for c in tables.PUBLISHED.names if c != "precision"]
#: The folder of the papers' published-results files, ``<paper>.csv`` each.
FOLDER = resources.files("storyflow") / "data" / "published"


def path_of(paper: str) -> Path:
    """The published-results file of ``paper`` (a name of
    :data:`storyflow.replication.papers.PAPERS`)."""
    path = Path(str(FOLDER / f"{paper}.csv"))
    if not path.is_file():
        known = sorted(Path(str(f)).stem for f in FOLDER.iterdir() if f.name.endswith(".csv"))
        raise ValueError(f"unknown paper {paper!r}; known: {', '.join(known)}")
    return path


def competitor_ids(listed: str) -> list[str]:
    """The ids of a row's ``competitors`` cell (';'-separated; [] when empty)."""
    return [c.strip() for c in str(listed or "").split(";") if c.strip()]


def half_unit(printed: str) -> float:
    """Half a unit in the last digit ``printed`` shows (0.0005 for '0.700', 0.005 for '-.06'):
    how far a figure printed so may lie from the unrounded one; NaN for an empty cell."""
    if not str(printed).strip():
        return math.nan
    exponent = Decimal(str(printed).strip()).as_tuple().exponent
    return 0.5 * 10.0 ** int(exponent)


def read(path: str | Path) -> pd.DataFrame:
    """The published figures at ``path`` (:data:`storyflow.tables.PUBLISHED`), checked: every id
    once, every row a value or a direction, every source naming a line of a paper, every
    direction decided by a line (``decided_by``), every competitor an id of the file with a
    value."""
    path = Path(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    tables.PUBLISHED.check(frame, path, needs=PRINTED)
    problems = []
    repeated = sorted(frame.loc[frame["id"].duplicated(), "id"])
    if repeated:
        problems.append(f"ids given twice: {', '.join(repeated)}")
    value = pd.to_numeric(frame["value"].replace("", None), errors="coerce")
    bad = frame.index[value.isna() & frame["value"].ne("")]
    if len(bad):
        problems.append(f"rows {', '.join(str(i + 2) for i in bad)}: value is not a number")
    empty = frame.index[frame["value"].eq("") & frame["direction"].eq("")]
    if len(empty):
        problems.append(
            f"rows {', '.join(str(i + 2) for i in empty)}: neither a value nor a direction"
        )
    unsourced = frame.index[~frame["source"].str.contains(r"\.txt l\. \d", regex=True)]
    if len(unsourced):
        problems.append(
            f"rows {', '.join(str(i + 2) for i in unsourced)}: source names no '<paper>.txt l. N'"
        )
    undecided = frame.index[
        frame["direction"].ne("") & ~frame["decided_by"].str.contains(r"l\. \d", regex=True)
    ]
    if len(undecided):
        problems.append(
            f"rows {', '.join(str(i + 2) for i in undecided)}: a direction whose decided_by "
            "names no line 'l. N' of the paper"
        )
    valued = set(frame.loc[value.notna(), "id"])
    for i, listed in frame["competitors"].items():
        unknown = [c for c in competitor_ids(listed) if c not in valued or c == frame.at[i, "id"]]
        if unknown:
            problems.append(
                f"row {i + 2}: competitors {', '.join(unknown)} are not other rows with a value"
            )
    if problems:
        raise StoryflowError(f"{path}: " + "; ".join(problems))
    precision = frame["value"].map(half_unit)
    return tables.PUBLISHED.frame(frame.assign(value=value, precision=precision))
