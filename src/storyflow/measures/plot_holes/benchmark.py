"""The published FlawedFictions files, read as made stories (maker ``flawedfictions``).

A file (JSON lines, a JSON list, or CSV) holds one story per record with, by default, the fields
``story``, ``cont_error`` (true/false or 1/0), ``cont_error_expl``, ``cont_error_lines`` and
``contradicted_lines`` (the quoted lines, a list or newline-separated text). Each story is split
into sentences with spaCy; a gold line matches the sentences whose text it contains (or that
contain it), whitespace and case ignored. A gold line that matches no sentence is an error
naming the story, never a silent miss; so is a story marked as flawed whose gold lines are
empty.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.corpora.base import read_csv_columns, read_utf8
from storyflow.errors import InputDataError, StoryflowError
from storyflow.measures.plot_holes.versions import version_row

MAKER = "flawedfictions"
FIELDS = {
    "story": "story",
    "error": "cont_error",
    "explanation": "cont_error_expl",
    "error_lines": "cont_error_lines",
    "contr_lines": "contradicted_lines",
}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"^[\s\"'>\-*\d.]+", "", text)).strip().lower()


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise StoryflowError(f"FlawedFictions file {path} does not exist (plot_holes.benchmark)")
    if path.suffix == ".csv":
        needed = [FIELDS["story"], FIELDS["error"]]
        return read_csv_columns(path, needed, "", what="story").to_dict("records")
    text = read_utf8(path)
    if text.strip().startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise InputDataError(path, _json_fix(err.msg), row=err.lineno) from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise InputDataError(path, _json_fix(err.msg), row=number) from None
    return records


def _json_fix(cause: str) -> str:
    return (
        f"not valid JSON ({cause}): the file is JSON Lines (one JSON object per line) or one "
        "JSON list of objects; check the quotes and commas on this line"
    )


def _lines(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [v for v in str(value or "").splitlines() if v.strip()]


def match_lines(story_id: str, gold: list[str], sentences: list[str], what: str) -> list[int]:
    """1-based numbers of the sentences each gold line matches (see the module docstring)."""
    if not gold:
        raise StoryflowError(
            f"FlawedFictions story {story_id}: marked as having an error but its {what} lines "
            "are empty; give the lines in the file or remove the story"
        )
    norm = [_norm(s) for s in sentences]
    found: set[int] = set()
    for line in gold:
        g = _norm(line)
        hits = {i + 1 for i, s in enumerate(norm) if s and g and (s in g or g in s)}
        if not hits:
            raise StoryflowError(
                f"FlawedFictions story {story_id}: the {what} line {line[:80]!r} matches none of "
                "the story's sentences; fix the line in the file or remove the story"
            )
        found |= hits
    return sorted(found)


def read_benchmark(
    path: str | Path, nlp: Any, fields: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """PLOT_HOLE_STORIES rows (version F for a story with an error, O without)."""
    names = {**FIELDS, **(fields or {})}
    rows = []
    for i, record in enumerate(_records(Path(path))):
        missing = [names[k] for k in ("story", "error") if names[k] not in record]
        if missing:
            raise StoryflowError(f"{path}: record {i + 1} lacks field(s) {', '.join(missing)}")
        story_id = str(record.get("id", f"ff{i + 1:04d}"))
        sents = [s.text.strip() for s in nlp(str(record[names["story"]])).sents if s.text.strip()]
        flawed = str(record[names["error"]]).strip().lower() in ("true", "1", "1.0", "yes")
        error = (
            match_lines(story_id, _lines(record.get(names["error_lines"])), sents, "error")
            if flawed
            else []
        )
        contr = (
            match_lines(story_id, _lines(record.get(names["contr_lines"])), sents, "contradicted")
            if flawed
            else []
        )
        version = "F" if flawed else "O"
        rows.append(
            version_row(
                story_id,
                MAKER,
                version,
                sents,
                error_lines=error,
                contr_lines=contr,
                target_idx=error[0] - 1 if error else -1,
                attribute_class="benchmark",
                proposition=str(record.get(names["explanation"], "")),
                original=" ".join(sents),
                verification="published",
                provenance=json.dumps({"maker": MAKER, "file": str(path)}),
            )
        )
    return tables.PLOT_HOLE_STORIES.frame(rows)
