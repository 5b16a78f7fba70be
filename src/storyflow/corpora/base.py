"""What every corpus reader shares: reading a CSV with required columns, limiting groups."""

from __future__ import annotations

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


def read_csv_columns(path: str | Path, columns: Sequence[str], download_hint: str) -> pd.DataFrame:
    """``path`` as strings, stopping with one message when it is absent or lacks ``columns``."""
    path = Path(path)
    if not path.is_file():
        raise StoryflowError(f"{path}: file not found. {download_hint}")
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    require_header(table, columns, path)
    return table


def limit_groups(stories: pd.DataFrame, limit: int | None, by: str = "group") -> pd.DataFrame:
    """The first ``limit`` rows of each ``by`` group (file order); all when ``limit`` is None."""
    if limit is None:
        return stories.reset_index(drop=True)
    return stories.groupby(by, sort=False).head(limit).reset_index(drop=True)
