"""The human step of the model maker: a review sheet out, the annotators' verdicts back in.

The paper has every made story rated by at least three annotators, who also correct the lines
that carry the error and the lines it contradicts; a story is kept only when the majority finds
its error legitimate (`flawed_fictions.txt` l. 86, l. 391, l. 412-428). The sheet (CSV) has one
row per story and annotator (:data:`SHEET_COLUMNS`): ``min_annotators`` rows per made story,
their ``annotator`` column numbered 1, 2, ... (write your own name or id there; add rows for
more annotators), the proposed error (its lines, numbered, and their text), the contradicted
lines, the explanation (the negated proposition and the quality judge's explanation), and for
the annotator to fill:

* ``verdict``: ``yes`` (a real continuity error) or ``no``; blank = not rated;
* ``error_lines`` and ``contr_lines``: the 1-based line numbers that carry the error and that
  it contradicts, prefilled with the proposed ones: remove the wrong ones, add the missed ones
  (numbers separated by ``;``, ``,`` or spaces); blank with a ``yes`` = the proposed lines;
* ``comment``: free text, not read.

Read back with :func:`read_reviews` (:func:`majority`): a story is **verified** when at least
``min_annotators`` annotators rated it and more than half of them said yes; **rejected** when
as many rated it and no more than half said yes (a tie is no majority for the error); otherwise
it stays **unverified**. The gold lines of a verified story are the lines marked by at least
half of the annotators who said yes (the paper does not say how it combines its annotators'
edits); a set nobody agrees on keeps the maker's lines.

An old sheet with one verdict per story (no ``annotator`` column) is read as one annotator per
row; with ``min_annotators`` above 1 it stops with one message saying what to add.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.corpora.base import read_csv_columns
from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)

SHEET_COLUMNS = (
    "story_id",
    "annotator",
    "proposed_error_lines",
    "proposed_error",
    "proposed_contr_lines",
    "proposed_contradicted",
    "explanation",
    "verdict",
    "error_lines",
    "contr_lines",
    "comment",
)


def _numbers(lines: Sequence[int]) -> str:
    return "; ".join(str(int(i)) for i in lines)


def _explanation(proposition: str, provenance: str) -> str:
    """What the sheet says of the proposed error: the negated proposition and the judge's
    explanation (the first judge sample that said yes; the paper shows its filter's
    explanation to the annotators, `flawed_fictions.txt` l. 76)."""
    judge = json.loads(provenance or "{}").get("judge_explanation", "")
    return f"after the edit: {proposition}" + (f"\njudge: {judge}" if judge else "")


def review_sheet(made: pd.DataFrame, annotators: int) -> pd.DataFrame:
    """The sheet of the flawed versions in ``made`` (PLOT_HOLE_STORIES rows): ``annotators``
    rows per story (module docstring)."""
    rows = []
    for item in made[made["version"] == "F"].itertuples(index=False):
        sents = list(item.sentences)
        error = " ".join(f"{i}. {sents[i - 1]}" for i in item.error_lines)
        contr = " ".join(f"{i}. {sents[i - 1]}" for i in item.contr_lines)
        for annotator in range(1, annotators + 1):
            rows.append(
                (
                    item.story_id,
                    str(annotator),
                    _numbers(item.error_lines),
                    error,
                    _numbers(item.contr_lines),
                    contr,
                    _explanation(item.proposition, item.provenance),
                    "",
                    _numbers(item.error_lines),
                    _numbers(item.contr_lines),
                    "",
                )
            )
    return pd.DataFrame(rows, columns=list(SHEET_COLUMNS))


@dataclass(frozen=True)
class Review:
    """The annotators' decision on one story: ``decision`` ``yes`` (verified), ``no``
    (rejected) or None (too few ratings: unverified); ``n_yes`` and ``n_rated`` annotators;
    ``error_lines`` and ``contr_lines``: the gold lines of a verified story (1-based; the
    maker's where no line has the agreement)."""

    decision: str | None
    n_yes: int
    n_rated: int
    error_lines: tuple[int, ...] = ()
    contr_lines: tuple[int, ...] = ()


def _agreed(marked: Sequence[Sequence[int]], proposed: Sequence[int]) -> tuple[int, ...]:
    """Lines marked by at least half of ``marked`` (one list per yes-annotator), else
    ``proposed``."""
    need = math.ceil(len(marked) / 2)
    counts: dict[int, int] = {}
    for lines in marked:
        for line in set(lines):
            counts[line] = counts.get(line, 0) + 1
    kept = tuple(sorted(line for line, n in counts.items() if n >= need))
    return kept or tuple(int(i) for i in proposed)


def majority(
    verdicts: Sequence[str],
    error_marks: Sequence[Sequence[int]],
    contr_marks: Sequence[Sequence[int]],
    proposed: tuple[Sequence[int], Sequence[int]],
    min_annotators: int,
) -> Review:
    """One story's :class:`Review` from its annotators' ``verdicts`` (``yes``/``no``) and the
    lines each marked (``error_marks``, ``contr_marks``: one list per annotator, in the order of
    ``verdicts``); ``proposed``: the maker's (error, contradicted) lines."""
    n_yes = sum(v == "yes" for v in verdicts)
    n = len(verdicts)
    if n < min_annotators:
        return Review(None, n_yes, n)
    if 2 * n_yes <= n:
        return Review("no", n_yes, n)
    yes = [i for i, v in enumerate(verdicts) if v == "yes"]
    return Review(
        "yes",
        n_yes,
        n,
        _agreed([error_marks[i] for i in yes], proposed[0]),
        _agreed([contr_marks[i] for i in yes], proposed[1]),
    )


def _parse_lines(value: object, n_lines: int) -> list[int] | None:
    """Line numbers of a cell (None when it holds something else or a number outside
    1..``n_lines``); a blank cell is []."""
    text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
    parts = [p for p in re.split(r"[;,\s]+", text.strip()) if p]
    if not all(re.fullmatch(r"\d+(?:\.0)?", p) for p in parts):
        return None
    lines = [int(float(p)) for p in parts]
    return lines if all(1 <= line <= n_lines for line in lines) else None


def _with_annotators(sheet: pd.DataFrame, path: str | Path, min_annotators: int) -> pd.DataFrame:
    """The sheet with an ``annotator`` column: an old one-verdict sheet is read as one
    annotator per row (``row <file line>``), or refused when ``min_annotators`` > 1."""
    if "annotator" in sheet.columns:
        return sheet
    if min_annotators > 1:
        raise StoryflowError(
            f"{path}: one verdict per story (no 'annotator' column), but a story is verified "
            f"by the majority of at least {min_annotators} annotators "
            "(plot_holes.model_maker.min_annotators). Rebuild the sheet with the pipeline "
            "(one row per story and annotator: columns story_id, annotator, verdict, "
            "error_lines, contr_lines) or set plot_holes.model_maker.min_annotators: 1 to "
            "read this sheet as one annotator per row."
        )
    return sheet.assign(annotator=[f"row {i + 2}" for i in range(len(sheet))])


def _marked_lines(
    rated: pd.DataFrame, flawed: pd.DataFrame
) -> tuple[dict[int, dict[str, list[int]]], list[int]]:
    """Sheet row → the lines its annotator marked by column (``error_lines``,
    ``contr_lines``: 1-based; the maker's proposed lines where a cell is blank or
    unreadable), for the ``rated`` rows of a story in ``flawed`` (the F versions by
    story_id); and the file lines (header = 1) of the rows with a cell that is not line
    numbers of the story."""
    marks: dict[int, dict[str, list[int]]] = {}
    bad_lines: list[int] = []
    for i, row in rated.iterrows():
        if row["story_id"] not in flawed.index:
            continue
        item = flawed.loc[row["story_id"]]
        parsed: dict[str, list[int]] = {}
        for column, proposed in (
            ("error_lines", item.error_lines),
            ("contr_lines", item.contr_lines),
        ):
            lines = _parse_lines(row.get(column), int(item.n_sentences))
            if lines is None:
                bad_lines.append(i + 2)
            parsed[column] = lines or [int(x) for x in proposed]
        marks[i] = parsed
    return marks, bad_lines


def _sheet_problems(
    ids: pd.Series,
    verdict: pd.Series,
    rated: pd.DataFrame,
    flawed: pd.DataFrame,
    bad_lines: Sequence[int],
) -> list[str]:
    """What is wrong with a sheet (story ``ids`` and normalized ``verdict`` per row, the
    ``rated`` rows, the ``flawed`` versions by story_id, the rows with ``bad_lines``), each
    naming its rows by file line (header = 1); empty when nothing is."""
    problems = []
    unknown = [i + 2 for i, s in enumerate(ids) if s not in flawed.index]
    if unknown:
        problems.append(f"unknown story ids in rows {unknown}")
    bad = [i + 2 for i, v in enumerate(verdict) if v not in ("", "yes", "no")]
    if bad:
        problems.append(f"verdicts other than yes/no in rows {bad}")
    twice = rated[rated.duplicated(["story_id", "annotator"], keep=False)]
    if len(twice):
        problems.append(f"one annotator rated a story twice in rows {[i + 2 for i in twice.index]}")
    if bad_lines:
        problems.append(
            f"error_lines or contr_lines that are not line numbers of the story in rows "
            f"{sorted(set(bad_lines))}"
        )
    return problems


def read_reviews(path: str | Path, made: pd.DataFrame, min_annotators: int) -> dict[str, Review]:
    """story_id → :class:`Review` of every story of the sheet with a rating (module docstring).

    Raises:
        StoryflowError: missing columns, unknown story ids, verdicts other than yes/no, line
            cells that are not line numbers of the story, two ratings of one story by one
            annotator, or an old one-verdict sheet while ``min_annotators`` > 1; the rows
            named (1-based file lines, header = 1).
    """
    sheet = read_csv_columns(
        path,
        ["story_id", "verdict"],
        "Check plot_holes.model_maker.verdicts: the review sheet the pipeline wrote "
        "(review_sheet.csv), with the verdicts filled in.",
        what="reviewed story",
    )
    sheet = _with_annotators(sheet, path, min_annotators)
    flawed = made[made["version"] == "F"].set_index("story_id")
    verdict = sheet["verdict"].fillna("").astype(str).str.strip().str.lower()
    ids = sheet["story_id"].astype(str)
    rated = sheet.assign(story_id=ids, verdict=verdict)[verdict.isin(["yes", "no"])]
    marks, bad_lines = _marked_lines(rated, flawed)
    problems = _sheet_problems(ids, verdict, rated, flawed, bad_lines)
    if problems:
        raise StoryflowError(
            f"{path}: {'; '.join(problems)}. Use the story ids of the sheet the pipeline wrote, "
            "write yes, no or nothing as the verdict, the story's line numbers (separated by ';') "
            "as the lines, and one row per story and annotator."
        )
    reviews = {}
    for story_id, rows in rated.groupby("story_id", sort=False):
        item = flawed.loc[story_id]
        reviews[str(story_id)] = majority(
            list(rows["verdict"]),
            [marks[i]["error_lines"] for i in rows.index],
            [marks[i]["contr_lines"] for i in rows.index],
            (item.error_lines, item.contr_lines),
            min_annotators,
        )
    short = sorted(s for s, r in reviews.items() if r.decision is None)
    if short:
        log.warning(
            "%d reviewed stories have fewer than %d ratings (plot_holes.model_maker."
            "min_annotators): left unverified: %s",
            len(short),
            min_annotators,
            ", ".join(short),
        )
    return reviews


def apply_reviews(
    made: pd.DataFrame, reviews: Mapping[str, Review]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``made`` with each verified story labelled ``yes`` (verification), its flawed version's
    gold lines set to the annotators' (:func:`majority`) and the votes in its provenance; and
    the rejected stories (PLOT_HOLE_SKIPPED rows, dropped from ``made``)."""
    made = made.copy()
    for i, row in made.iterrows():
        review = reviews.get(row["story_id"])
        if review is None or review.decision != "yes":
            continue
        made.at[i, "verification"] = "yes"
        provenance = json.loads(row["provenance"] or "{}")
        provenance["review"] = {"yes": review.n_yes, "rated": review.n_rated}
        made.at[i, "provenance"] = json.dumps(provenance, sort_keys=True)
        if row["version"] == "F":
            made.at[i, "error_lines"] = list(review.error_lines)
            made.at[i, "contr_lines"] = list(review.contr_lines)
    rejected = sorted(s for s, r in reviews.items() if r.decision == "no")
    skipped = tables.PLOT_HOLE_SKIPPED.frame(
        [
            tables.PLOT_HOLE_SKIPPED.row(
                story_id=s,
                maker="model",
                reason=f"rejected by the annotators ({reviews[s].n_yes} of {reviews[s].n_rated} "
                "found the error legitimate)",
            )
            for s in rejected
        ]
    )
    return made[~made["story_id"].isin(rejected)].reset_index(drop=True), skipped
