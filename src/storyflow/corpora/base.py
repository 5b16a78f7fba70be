"""What every corpus reader shares: reading a CSV with required columns, limiting groups."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from storyflow.errors import InputDataError, StoryflowError


def read_csv_columns(path: str | Path, columns: Sequence[str], download_hint: str) -> pd.DataFrame:
    """``path`` as strings, stopping with one message when it is absent or lacks ``columns``."""
    path = Path(path)
    if not path.is_file():
        raise StoryflowError(f"{path}: file not found. {download_hint}")
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InputDataError(
            path,
            f"missing required column(s) {', '.join(missing)}; the header has "
            f"{', '.join(map(repr, table.columns))}",
            row=1,
        )
    return table


def limit_groups(stories: pd.DataFrame, limit: int | None, by: str = "group") -> pd.DataFrame:
    """The first ``limit`` rows of each ``by`` group (file order); all when ``limit`` is None."""
    if limit is None:
        return stories.reset_index(drop=True)
    return stories.groupby(by, sort=False).head(limit).reset_index(drop=True)
