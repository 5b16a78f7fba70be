"""A user's own stories as a CSV file: one row per story, the columns named in the config.

The config names the id, text and group columns (and optionally a topic and a block column):
``{id: story_id, text: story, group: condition, topic: prompt, block: prompt_id}``;
stories sharing a block are matched (:func:`storyflow.contrast_answers.answers.blocks_of`).
Stories with an empty text are excluded with their row and the reason, and so are texts
without a letter (only digits, punctuation or symbols) and stories whose group cell is empty
(they belong to no group, so no contrast could count them; a group column empty in every row
stops the run, as a wrong column name); an empty or repeated id stops with the rows named. The
file must be comma-separated UTF-8 with a header and at least one story
(:func:`read_csv_columns` names the line and the fix otherwise).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.corpora.base import LETTER, NO_LETTERS, empty_group_reason, read_csv_columns
from storyflow.errors import InputDataError

log = logging.getLogger(__name__)

#: The config keys of a CSV corpus's ``columns`` block that must be present, and the others.
REQUIRED_KEYS = ("id", "text", "group")
OPTIONAL_KEYS = ("topic", "block")
#: Header row 1, first story row 2 (as a spreadsheet numbers them).
_FIRST_ROW = 2


def read_csv_stories(
    path: str | Path, columns: Mapping[str, str | None], corpus: str = ""
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The stories of a CSV corpus (:data:`storyflow.tables.STORIES`) and those excluded.

    ``story_type`` holds the group column's value; ``topic`` the topic column's (None when the
    config names none or the cell is empty); ``block``, where the config names a block column,
    its value (None when the cell is empty). ``corpus``: the corpus's name, for the config keys
    a message names (``corpora.<corpus>.columns.text``).
    """
    named = {key: columns.get(key) for key in (*REQUIRED_KEYS, *OPTIONAL_KEYS)}
    table = read_csv_columns(
        path,
        [c for c in named.values() if c],
        "Check the corpus's `path` in the config (a relative path is read from the folder "
        "snakemake runs in).",
        keys=column_keys(named, corpus),
    )
    ids = check_ids(path, table, str(named["id"]))
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
    if named["block"]:
        block = table[named["block"]].str.strip()
        stories["block"] = block.where(block != "", None)
    no_group = stories["story_type"] == ""
    if no_group.all():
        raise InputDataError(
            path,
            f"the group column {named['group']!r} is empty in every row: name the column that "
            "holds each story's group (the corpus's columns.group in the config), or fill it",
        )
    empty = text == ""
    no_letters = ~empty & ~text.str.contains(LETTER, regex=True)
    group_reason = empty_group_reason(str(named["group"]))  # a required key: a column name
    reasons = pd.Series("", index=text.index).mask(no_group, group_reason)
    reasons = reasons.mask(empty, "empty story text").mask(no_letters, NO_LETTERS)
    out = reasons != ""
    excluded = tables.EXCLUDED.frame(
        tables.EXCLUDED.row(story_id=sid, story_type=group, row=row + _FIRST_ROW, reason=reason)
        for row, sid, group, reason in zip(
            stories.index[out],
            stories["story_id"][out],
            stories["story_type"][out],
            reasons[out],
            strict=True,
        )
    )
    for reason, rows in excluded.groupby("reason", sort=False)["row"]:
        listed = ", ".join(map(str, rows.iloc[:5])) + (" ..." if len(rows) > 5 else "")
        log.warning("%s: %d story(ies) excluded (%s): row(s) %s", path, len(rows), reason, listed)
    return tables.STORIES.frame(stories[~out].reset_index(drop=True)), excluded


def column_keys(named: Mapping[str, str | None], corpus: str) -> dict[str, str]:
    """Each named column's config key (``corpora.<corpus>.columns.<key>``; ``columns.<key>``
    when the corpus is not named)."""
    prefix = f"corpora.{corpus}.columns" if corpus else "columns"
    return {column: f"{prefix}.{key}" for key, column in named.items() if column}


def left_out(path: str | Path, columns: Mapping[str, str | None], corpus: str) -> list[str]:
    """One line per story of the file that the run will leave out (an empty text, no letters,
    no group), read when the workflow is planned, so that it is said before any model runs:
    the file, the row (as a spreadsheet numbers them), the id, the reason and the fix. [] when
    the file is absent."""
    if not Path(path).is_file():
        return []
    _, excluded = read_csv_stories(path, columns, corpus)
    lines = [
        f"{path}, row {r.row} (id {r.story_id!r}): {r.reason}: the story is left out of every "
        "table; fill the cell or remove the row"
        for r in excluded.head(10).itertuples(index=False)
    ]
    more = len(excluded) - len(lines)
    tail = [f"{path}: and {more} more row(s) left out (sample_counts.csv)"] if more else []
    return lines + tail


def check_ids(path: str | Path, table: pd.DataFrame, column: str) -> pd.Series:
    """The story ids of ``table`` (column ``column``, stripped), after stopping on an empty or
    repeated one: a story is found by its id, so two stories with one id would be scored as one
    (or, in the results, mixed). Read at planning too (:func:`group_values`).

    Raises:
        InputDataError: naming the file, the column, the id and its rows (as a spreadsheet
            numbers them: header row 1) and the fix.
    """
    ids = table[column].str.strip()
    empty = ids == ""
    if empty.any():
        listed = _rows(empty[empty].index)
        raise InputDataError(
            path,
            f"empty story id in row(s) {listed} (column {column!r}): give every story an id",
        )
    repeated = ids[ids.duplicated(keep=False)]
    if not repeated.empty:
        said = "; ".join(
            f"{value!r} in rows {_rows(rows.index)}"
            for value, rows in list(repeated.groupby(repeated, sort=False))[:3]
        )
        more = repeated.nunique() - 3
        raise InputDataError(
            path,
            f"repeated story id (column {column!r}): {said}"
            + (f"; and {more} more" if more > 0 else "")
            + ". Each story needs an id of its own: give the repeated stories other ids, or "
            "remove a story entered twice",
        )
    return ids


def _rows(index: pd.Index) -> str:
    """Rows of the file as a spreadsheet numbers them (the first five)."""
    listed = ", ".join(str(r + _FIRST_ROW) for r in index[:5])
    return listed + (" ..." if len(index) > 5 else "")


def corpus_tables(
    path: str | Path, columns: Mapping[str, str | None], corpus: str = ""
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Stories, excluded stories and counts per group of a CSV corpus (every story is kept).

    The counts table is :data:`storyflow.tables.SAMPLE_COUNTS` with ``n_sampled`` equal to the
    stories kept (a CSV corpus is analysed whole).
    """
    from storyflow.corpora.hippocorpus import sample_counts

    stories, excluded = read_csv_stories(path, columns, corpus)
    groups = sorted(set(stories["story_type"]) | set(excluded["story_type"]))
    return stories, excluded, sample_counts(stories, stories, excluded, groups)


def group_values(
    path: str | Path, columns: Mapping[str, str | None], corpus: str = ""
) -> list[str] | None:
    """The distinct values of a CSV corpus's group column (None when the file is absent).

    Read at parse time to check the corpus's contrasts before any job; a file that cannot be
    read stops the run there with the message of :func:`read_csv_columns`, an empty or repeated
    story id with that of :func:`check_ids`.
    """
    path = Path(path)
    if not path.is_file():
        return None
    named = {k: columns.get(k) for k in (*REQUIRED_KEYS, *OPTIONAL_KEYS)}
    table = read_csv_columns(
        path, [c for c in named.values() if c], "", keys=column_keys(named, corpus)
    )
    check_ids(path, table, str(columns["id"]))
    values = table[columns["group"]]
    return sorted(set(values.str.strip()) - {""})
