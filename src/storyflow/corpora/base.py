"""What every corpus reader shares: reading a CSV with required columns, limiting groups."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from storyflow.errors import InputDataError, StoryflowError


def require_header(
    table: pd.DataFrame, columns: Sequence[str], path: str | Path, expected: str = ""
) -> None:
    """Stop when ``table`` (read from the user's file ``path``) lacks any of ``columns``.

    The one message for every corpus file: the file, row 1 (the header), the missing columns,
    the columns the header has, and ``expected`` (what the file should look like), if given.
    """
    missing = [c for c in columns if c not in table.columns]
    if missing:
        found = ", ".join(map(repr, table.columns)) or "no columns"
        raise InputDataError(
            path,
            f"missing required column(s) {', '.join(missing)}; the header has {found}"
            + (f". {expected}" if expected else ""),
            row=1,
        )


#: A story text must hold at least one letter (any script) to be read; the reason given for
#: one that holds none (only digits, punctuation or symbols) in the exclusions table.
LETTER = r"[^\W\d_]"
NO_LETTERS = "no letters in the story text (nothing to read)"

OTHER_DELIMITERS = {";": "semicolon", "\t": "tab", "|": "vertical bar"}
"""Delimiters a spreadsheet may have saved instead of the comma, named in the message."""


def read_utf8(path: str | Path) -> str:
    """A user's text file (UTF-8, a byte-order mark allowed), stopping with one message naming
    the file, the line and the fix when it is in another encoding."""
    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise InputDataError(
            path,
            f"the file is not UTF-8 text (byte 0x{raw[err.start]:02x} on this line; perhaps "
            f"Latin-1 or Windows-1252). Save it as UTF-8 ('CSV UTF-8' in a spreadsheet, or "
            f"`iconv -f windows-1252 -t utf-8 {path.name} > utf8-{path.name}`) and point the "
            "config at the new file",
            row=line,
        ) from None
    return text


def read_csv_text(path: str | Path, sep: str = ",", comment: str | None = None) -> pd.DataFrame:
    """A user's CSV file as strings (:func:`read_utf8`), stopping with one message naming the
    file and line for an empty file or a row that does not parse. ``sep``, ``comment``: as in
    pandas (a lexicon is tab-separated with ``#`` comments)."""
    path = Path(path)
    text = read_utf8(path)
    try:
        return pd.read_csv(
            io.StringIO(text), sep=sep, comment=comment, dtype=str, keep_default_na=False
        )
    except pd.errors.EmptyDataError:
        raise InputDataError(
            path, "the file is empty: it needs a header row and one row per story"
        ) from None
    except pd.errors.ParserError as err:
        found = re.search(r"line (\d+)", str(err))
        raise InputDataError(
            path,
            f"the row does not parse as CSV ({str(err).strip()}): a field holding a comma or a "
            'line break must be enclosed in double quotes ("...")',
            row=int(found.group(1)) if found else None,
        ) from None


def other_delimiter(path: str | Path, columns: Sequence[str]) -> str | None:
    """The delimiter other than the comma that the header of ``path`` splits on into the
    expected ``columns`` (or into several fields); None if none does."""
    with Path(path).open(encoding="utf-8-sig", errors="replace") as f:
        header = f.readline().rstrip("\r\n")
    for delimiter in OTHER_DELIMITERS:
        fields = [h.strip().strip('"') for h in header.split(delimiter)]
        if len(fields) > 1 and (set(columns) <= set(fields) or "," not in header):
            return delimiter
    return None


def read_csv_columns(
    path: str | Path, columns: Sequence[str], download_hint: str, what: str = "story"
) -> pd.DataFrame:
    """``path`` as strings (:func:`read_csv_text`), stopping with one message when it is absent,
    lacks ``columns`` (naming another delimiter when the header uses one) or has no data row
    (``what``: what a row holds, for that message)."""
    path = Path(path)
    if not path.is_file():
        raise StoryflowError(f"{path}: file not found. {download_hint}")
    table = read_csv_text(path)
    if any(c not in table.columns for c in columns):
        delimiter = other_delimiter(path, columns)
        if delimiter:
            raise InputDataError(
                path,
                f"the header is separated by {OTHER_DELIMITERS[delimiter]} ({delimiter!r}), not "
                "by commas: storyflow reads comma-separated files. Save it as comma-separated "
                "CSV (in a spreadsheet: 'CSV (comma delimited)'), or convert it, e.g. with "
                f"pandas: pd.read_csv(path, sep={delimiter!r}).to_csv(new_path, index=False)",
                row=1,
            )
    require_header(table, columns, path)
    if table.empty:
        raise InputDataError(
            path, f"no data rows: the file has a header only; add one row per {what}", row=2
        )
    return table


def limit_groups(stories: pd.DataFrame, limit: int | None, by: str = "group") -> pd.DataFrame:
    """The first ``limit`` rows of each ``by`` group (file order); all when ``limit`` is None."""
    if limit is None:
        return stories.reset_index(drop=True)
    return stories.groupby(by, sort=False).head(limit).reset_index(drop=True)
