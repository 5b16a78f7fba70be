"""The human step of the model maker: a review sheet out, verdicts back in.

The sheet (CSV) has one row per made story: ``story_id``, ``proposed_error`` (the changed
lines, numbered), ``explanation`` (the negated proposition and the contradicted lines) and a
blank ``verdict``. A reviewer writes ``yes`` (a real continuity error) or ``no``; a blank
verdict leaves the story unverified. Read back with :func:`read_verdicts`, ``no`` drops the
story (listed with the reason), ``yes`` marks it verified.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.corpora.base import read_csv_columns
from storyflow.errors import StoryflowError

SHEET_COLUMNS = ("story_id", "proposed_error", "explanation", "verdict")


def review_sheet(made: pd.DataFrame) -> pd.DataFrame:
    """The sheet of the flawed versions in ``made`` (PLOT_HOLE_STORIES rows)."""
    rows = []
    for item in made[made["version"] == "F"].itertuples(index=False):
        sents = list(item.sentences)
        error = " ".join(f"{i}. {sents[i - 1]}" for i in item.error_lines)
        contr = " ".join(f"{i}. {sents[i - 1]}" for i in item.contr_lines)
        rows.append((item.story_id, error, f"{item.proposition}; contradicts {contr}", ""))
    return pd.DataFrame(rows, columns=list(SHEET_COLUMNS))


def read_verdicts(path: str | Path, made: pd.DataFrame) -> dict[str, str]:
    """story_id → ``yes``/``no`` from a completed sheet; blank verdicts are left out.

    Raises:
        StoryflowError: missing columns, unknown story ids or verdicts other than yes/no, with
            the rows named (1-based file lines, header = 1).
    """
    sheet = read_csv_columns(
        path,
        ["story_id", "verdict"],
        "Check plot_holes.model_maker.verdicts: the review sheet the pipeline wrote "
        "(review_sheet.csv), with the verdicts filled in.",
        what="reviewed story",
    )
    known = set(made.loc[made["version"] == "F", "story_id"])
    verdict = sheet["verdict"].str.strip().str.lower()
    unknown = [i + 2 for i, s in enumerate(sheet["story_id"]) if s not in known]
    bad = [i + 2 for i, v in enumerate(verdict) if v not in ("", "yes", "no")]
    problems = []
    if unknown:
        problems.append(f"unknown story ids in rows {unknown}")
    if bad:
        problems.append(f"verdicts other than yes/no in rows {bad}")
    if problems:
        raise StoryflowError(
            f"{path}: {'; '.join(problems)}. Use the story ids of the sheet the pipeline wrote "
            "and write yes, no, or leave the verdict blank."
        )
    return {s: v for s, v in zip(sheet["story_id"], verdict, strict=True) if v}


def apply_verdicts(
    made: pd.DataFrame, verdicts: Mapping[str, str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``made`` with ``verification`` set from the verdicts, and the rejected stories
    (PLOT_HOLE_SKIPPED rows, dropped from ``made``)."""
    made = made.copy()
    given = made["story_id"].map(verdicts)
    made.loc[given.notna(), "verification"] = given[given.notna()]
    rejected = sorted(s for s, v in verdicts.items() if v == "no")
    skipped = tables.PLOT_HOLE_SKIPPED.frame(
        [(s, "model", "rejected by the human reviewer") for s in rejected]
    )
    return made[~made["story_id"].isin(rejected)].reset_index(drop=True), skipped
