"""A user's own stories as a CSV file: one row per story, the columns named in the config.

The config names the id, text and group columns (and optionally a topic column):
``{id: story_id, text: story, group: condition, topic: prompt}``. Stories with an empty text are
excluded with their row and the reason; an empty or repeated id stops with the rows named.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.corpora.base import read_csv_columns
from storyflow.errors import InputDataError

#: The config keys of a CSV corpus's ``columns`` block that must be present.
REQUIRED_KEYS = ("id", "text", "group")
#: Header row 1, first story row 2 (as a spreadsheet numbers them).
_FIRST_ROW = 2


def read_csv_stories(
    path: str | Path, columns: Mapping[str, str | None]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The stories of a CSV corpus (:data:`storyflow.tables.STORIES`) and those excluded.

    ``story_type`` holds the group column's value; ``topic`` the topic column's (None when the
    config names none or the cell is empty).
    """
    named = {key: columns.get(key) for key in (*REQUIRED_KEYS, "topic")}
    table = read_csv_columns(
        path,
        [c for c in named.values() if c],
        "Check the corpus's `path` in the config (relative paths are inside data.mirror).",
    )
    ids = table[named["id"]].str.strip()
    for problem, rows in (
        ("empty story id", ids == ""),
        ("repeated story id", ids.duplicated(keep=False) & (ids != "")),
    ):
        if rows.any():
            listed = ", ".join(str(r + _FIRST_ROW) for r in rows[rows].index[:5])
            raise InputDataError(path, f"{problem} in row(s) {listed} (column {named['id']!r})")
    text = table[named["text"]].str.strip()
    topic = table[named["topic"]].str.strip() if named["topic"] else pd.Series("", index=ids.index)
    stories = pd.DataFrame(
        {
            "story_id": ids,
            "story_type": table[named["group"]].str.strip(),
            "text": text,
            "topic": topic.where(topic != "", None),
            "has_topic": topic != "",
        }
    )
    empty = text == ""
    excluded = tables.EXCLUDED.frame(
        (sid, group, row + _FIRST_ROW, "empty story text")
        for row, sid, group in zip(
            stories.index[empty],
            stories["story_id"][empty],
            stories["story_type"][empty],
            strict=True,
        )
    )
    return tables.STORIES.frame(stories[~empty].reset_index(drop=True)), excluded


def corpus_tables(
    path: str | Path, columns: Mapping[str, str | None]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Stories, excluded stories and counts per group of a CSV corpus (every story is kept).

    The counts table is :data:`storyflow.tables.SAMPLE_COUNTS` with ``n_sampled`` equal to the
    stories kept (a CSV corpus is analysed whole).
    """
    from storyflow.corpora.hippocorpus import sample_counts

    stories, excluded = read_csv_stories(path, columns)
    groups = sorted(set(stories["story_type"]) | set(excluded["story_type"]))
    return stories, excluded, sample_counts(stories, stories, excluded, groups)


def group_values(path: str | Path, columns: Mapping[str, str | None]) -> list[str] | None:
    """The distinct values of a CSV corpus's group column (None when the file is absent).

    Read at parse time to check the corpus's contrasts before any job; only that column is read.
    """
    path = Path(path)
    if not path.is_file():
        return None
    group = columns["group"]
    header = pd.read_csv(path, nrows=0).columns
    if group not in header:
        return None  # the read_csv_corpus rule names the missing column
    values = pd.read_csv(path, usecols=[group], dtype=str, keep_default_na=False)[group]
    return sorted(set(values.str.strip()) - {""})
