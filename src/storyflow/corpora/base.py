"""What every corpus reader shares: reading a CSV with required columns, limiting groups."""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from storyflow.errors import InputDataError, StoryflowError


def require_header(
    table: pd.DataFrame,
    columns: Sequence[str],
    path: str | Path,
    expected: str = "",
    keys: Mapping[str, str] | None = None,
) -> None:
    """Stop when ``table`` (read from the user's file ``path``) lacks any of ``columns``.

    The one message for every corpus file: the file, its header (row 1), the missing columns
    (each with the config key that names it, where ``keys`` maps it to one), the columns the
    header has, and ``expected`` (what the file should look like) or, for a named column, the
    fix: rename the file's column or set the key to one of the header's.
    """
    missing = [c for c in columns if c not in table.columns]
    if missing:
        found = ", ".join(map(repr, table.columns)) or "no columns"
        keyed = {c: keys[c] for c in missing if keys and c in keys}
        said = ", ".join(f"{c!r} (named by {keyed[c]})" if c in keyed else c for c in missing)
        fix = (
            f"Set {', '.join(keyed.values())} to the header's name of that column, or rename "
            "the column in the file"
            if keyed
            else expected
        )
        raise InputDataError(
            path,
            f"missing required column(s) {said}; the header has {found}"
            + (f". {fix}" if fix else ""),
            row=1,
        )


#: A story text must hold at least one letter (any script) to be read; the reason given for
#: one that holds none (only digits, punctuation or symbols) in the exclusions table.
LETTER = r"[^\W\d_]"
NO_LETTERS = "no letters in the story text (nothing to read)"


def empty_group_reason(column: str) -> str:
    """The exclusions table's reason for a story whose group cell (``column``) is empty: it
    belongs to no group, so no contrast or group summary could count it."""
    return f"empty group (column {column!r}): in no group, so in no contrast"


OTHER_DELIMITERS = {";": "semicolon", "\t": "tab", "|": "vertical bar"}
"""Delimiters a spreadsheet may have saved instead of the comma, named in the message."""


#: Byte-order marks of UTF-16 and UTF-32 and their encodings, longest first (UTF-32LE's begins
#: with UTF-16LE's). A file that begins with one is read in that encoding.
BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "UTF-32LE"),
    (codecs.BOM_UTF32_BE, "UTF-32BE"),
    (codecs.BOM_UTF16_LE, "UTF-16LE"),
    (codecs.BOM_UTF16_BE, "UTF-16BE"),
)


def _convert_hint(path: Path, encoding: str) -> str:
    """How to save ``path`` as UTF-8 when it is in ``encoding`` (an iconv name)."""
    return (
        f"Save it as UTF-8 ('CSV UTF-8' in a spreadsheet, or `iconv -f {encoding} -t UTF-8 "
        f"{path.name} > utf8-{path.name}`) and point the config at the new file"
    )


def decode_text(raw: bytes, path: str | Path) -> str:
    """The text of a user's file ``path`` whose bytes are ``raw``: UTF-8, or the encoding its
    byte-order mark names (UTF-8 with a BOM, UTF-16 and UTF-32, as Excel's "Unicode text" and
    Windows tools save them); the mark is dropped. Anything else stops with one message naming
    the file, the line, the byte offset, the encoding it looks like and the ``iconv`` command
    that converts it: a zip archive (an ``.xlsx`` workbook), UTF-16 without a byte-order mark
    (NUL bytes between the letters), or another 8-bit encoding (Windows-1252 or Latin-1).
    """
    path = Path(path)
    for mark, encoding in BYTE_ORDER_MARKS:
        if raw.startswith(mark):
            body = raw[len(mark) :]
            try:
                return body.decode(encoding)
            except UnicodeDecodeError as err:
                line = body[: err.start].decode(encoding, errors="replace").count("\n") + 1
                raise InputDataError(
                    path,
                    f"the file begins with the byte-order mark of {encoding} but is not valid "
                    f"{encoding} text (at byte offset {len(mark) + err.start}, line {line}; cut "
                    f"short, or parts in another encoding). {_convert_hint(path, encoding[:6])}",
                    row=line,
                ) from None
    if raw.startswith(b"PK\x03\x04"):
        raise InputDataError(
            path,
            "the file is a zip archive (an Excel .xlsx or OpenDocument workbook?), not text: "
            "save the sheet as 'CSV UTF-8 (comma delimited)' and point the config at that file",
        )
    utf16 = _utf16_without_mark(raw)
    if utf16 is not None:
        raise InputDataError(
            path,
            f"the file looks like {utf16} text without a byte-order mark (a NUL byte beside "
            f"every letter), not UTF-8. {_convert_hint(path, utf16)}",
        )
    skip = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        return raw[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = skip + err.start
        line = raw[:offset].count(b"\n") + 1
        raise InputDataError(
            path,
            f"the file is not UTF-8 text (byte 0x{raw[offset]:02x} at byte offset {offset}, "
            f"line {line}; perhaps Windows-1252 or Latin-1). "
            + _convert_hint(path, "WINDOWS-1252"),
            row=line,
        ) from None


def _utf16_without_mark(raw: bytes) -> str | None:
    """``UTF-16LE`` or ``UTF-16BE`` when ``raw`` (its first 4,000 bytes) has a NUL byte in at
    least a third of its odd (LE) or even (BE) positions and few in the others, as UTF-16 text
    of mostly Latin letters has and UTF-8 text (or a binary file) has not; None otherwise."""
    head = raw[:4000]
    if len(head) < 4 or b"\x00" not in head:
        return None
    even, odd = head[0::2].count(0), head[1::2].count(0)
    half = len(head) // 2
    if odd >= half / 3 and even <= odd / 10:
        return "UTF-16LE"
    if even >= half / 3 and odd <= even / 10:
        return "UTF-16BE"
    return None


def read_utf8(path: str | Path) -> str:
    """A user's text file (:func:`decode_text`: UTF-8, or the encoding its byte-order mark
    names), stopping with one message naming the file, the line and the fix otherwise."""
    path = Path(path)
    return decode_text(path.read_bytes(), path)


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
    header = read_utf8(path).split("\n", 1)[0].rstrip("\r")
    for delimiter in OTHER_DELIMITERS:
        fields = [h.strip().strip('"') for h in header.split(delimiter)]
        if len(fields) > 1 and (set(columns) <= set(fields) or "," not in header):
            return delimiter
    return None


def read_csv_columns(
    path: str | Path,
    columns: Sequence[str],
    download_hint: str,
    what: str = "story",
    keys: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """``path`` as strings (:func:`read_csv_text`), stopping with one message when it is absent,
    lacks ``columns`` (naming another delimiter when the header uses one, and each column's
    config key in ``keys``: :func:`require_header`) or has no data row (``what``: what a row
    holds, for that message)."""
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
    require_header(table, columns, path, keys=keys)
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
