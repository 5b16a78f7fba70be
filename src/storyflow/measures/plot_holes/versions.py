"""The story versions detectors are shown: rows of :data:`storyflow.tables.PLOT_HOLE_STORIES`,
each named by its item id, as every maker writes them, and the pass over them that the
detectors and baselines make."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.progress import LoggedBar


def item_id(story_id: str, maker: str, version: str) -> str:
    """The id of ``version`` (O original, F flawed, C, D) of story ``story_id`` as ``maker``
    made it (maker ``original``: the story unmodified), the key of PLOT_HOLE_STORIES:
    ``<story_id>:<maker>:<version>``."""
    return f"{story_id}:{maker}:{version}"


def version_row(
    story_id: str, maker: str, version: str, sentences: Sequence[str], **columns: Any
) -> dict[str, Any]:
    """The PLOT_HOLE_STORIES row of ``version`` of story ``story_id`` as ``maker`` made it:
    its :func:`item_id`, ``has_error`` (only the flawed version F has the error), its
    ``sentences`` and their number; ``columns``: the table's other columns."""
    return tables.PLOT_HOLE_STORIES.row(
        story_id=story_id,
        item_id=item_id(story_id, maker, version),
        maker=maker,
        version=version,
        has_error=version == "F",
        n_sentences=len(sentences),
        sentences=list(sentences),
        **columns,
    )


def each_version(items: pd.DataFrame, desc: str, unit: str = "story") -> Iterable[Any]:
    """The rows of ``items`` (PLOT_HOLE_STORIES) as named tuples, one at a time, behind a
    progress bar on stderr that also writes to the rule log (every 5 s at the most); ``desc``
    names the pass (``"detect (qwen)"``), ``unit`` what a row counts as."""
    return LoggedBar(
        items.itertuples(index=False),
        total=len(items),
        desc=desc,
        unit=unit,
        file=sys.stderr,
        mininterval=5.0,
    )
