"""The stories the per-story measures read from HANNA and ROCStories: one seeded sample each.

HIPPOCORPUS has its stratified sample (:func:`storyflow.corpora.hippocorpus.sample_stories`) and
a user's CSV corpus is read whole; this module gives the two benchmark corpora the same form, the
:data:`storyflow.tables.STORIES` table, so that tension, fabula entropy and plot holes (and the
sentence splitter before them) read every corpus the same way and score the same stories.

- HANNA is sampled by **prompt**: ``prompts`` writing prompts drawn with ``seed``, and for each the
  human story and every LLM's story, so that the human-vs-LLM contrasts stay paired by prompt.
  ``story_type`` is ``"Human"`` or the LLM's name, ``topic`` the prompt; labels ``prompt_id`` (the
  pairing key) and ``artefact`` (the text holds a ``Human:``/``Assistant:`` chat turn).
- ROCStories is sampled by story: ``stories`` cloze stories drawn with ``seed``; ``text`` is the
  four context sentences and the right ending; labels ``context``, ``right_ending`` and
  ``wrong_ending`` (the cloze test's other candidate).

A story whose text is empty, or whose group label is (a HANNA row with an empty ``Model`` cell:
in no group, so in no contrast), is excluded and listed (:data:`storyflow.tables.EXCLUDED`) and
logged, never dropped silently; ``row`` is its row in the source CSV (header = 1; for a HANNA
human story, the first row of its prompt).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.corpora.base import empty_group_reason
from storyflow.corpora.hanna import read_hanna
from storyflow.corpora.rocstories import read_rocstories
from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)


def _draw(n_items: int, size: int | None, seed: int) -> np.ndarray:
    """Sorted positions of ``size`` items drawn from ``n_items`` (all when ``size`` is None;
    ``size`` >= 1 is the config schema's range)."""
    if size is None:
        return np.arange(n_items)
    size = min(size, n_items)
    return np.sort(np.random.default_rng(seed).choice(n_items, size=size, replace=False))


def _tables(
    stories: pd.DataFrame, rows: pd.Series, labels: list[str], group_column: str
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Stories, exclusions and counts of a sample (``rows``: source CSV row of each story;
    ``group_column``: the source column of ``story_type``, named in the reason when empty)."""
    no_group = stories["story_type"].fillna("").str.strip() == ""
    reason = pd.Series("", index=stories.index).mask(no_group, empty_group_reason(group_column))
    reason = reason.mask(stories["text"].fillna("").str.strip() == "", "empty text")
    out = reason != ""
    excluded = tables.EXCLUDED.frame(
        pd.DataFrame(
            {
                "story_id": stories.loc[out, "story_id"],
                "story_type": stories.loc[out, "story_type"],
                "row": rows[out].astype("int64"),
                "reason": reason[out],
            }
        )
    )
    for why, where in excluded.groupby("reason", sort=False)["row"]:
        listed = ", ".join(map(str, where.iloc[:5])) + (" ..." if len(where) > 5 else "")
        log.warning("%d story(ies) excluded (%s): source row(s) %s", len(where), why, listed)
    kept = stories.loc[~out].reset_index(drop=True)
    kept["has_topic"] = kept["topic"].notna()
    kept = tables.STORIES.frame(kept[[*tables.STORIES.names, *labels]])
    counts = pd.DataFrame(
        {
            "n_in_corpus": stories.groupby("story_type", sort=False).size(),
            "n_excluded": excluded.groupby("story_type", sort=False).size(),
            "n_sampled": kept.groupby("story_type", sort=False).size(),
            "n_with_topic": kept.groupby("story_type", sort=False)["has_topic"].sum(),
        }
    )
    counts = counts.fillna(0).astype("int64").reset_index(names="story_type")
    counts["n_without_topic"] = counts["n_sampled"] - counts["n_with_topic"]
    return kept, excluded, tables.SAMPLE_COUNTS.frame(counts)


def hanna_stories(
    path: str | Path, prompts: int | None, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """HANNA's stories for ``prompts`` seeded prompts (None: all 96), every group's story each.

    Returns the stories (:data:`~storyflow.tables.STORIES` plus ``prompt_id``, ``artefact``), the
    excluded stories and the counts per group (``n_in_corpus``: stories of the drawn prompts).
    """
    stories, _ = read_hanna(path)
    chosen = _draw(int(stories["prompt_id"].max()) + 1, prompts, seed)
    sample = stories[stories["prompt_id"].isin(chosen)]
    sample = sample.rename(columns={"group": "story_type", "prompt": "topic"})
    sample = sample.sort_values(["prompt_id", "story_type"], kind="stable").reset_index(drop=True)
    return _tables(sample, sample["row"], ["prompt_id", "artefact"], "Model")


def rocstories_stories(
    path: str | Path, n_stories: int | None, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``n_stories`` seeded ROCStories cloze stories (None: all 1,871), with both endings.

    Returns the stories (:data:`~storyflow.tables.STORIES` plus ``context``, ``right_ending``,
    ``wrong_ending``), the excluded stories and the counts.
    """
    stories = read_rocstories(path)
    chosen = _draw(len(stories), n_stories, seed)
    sample = stories.iloc[chosen].rename(columns={"group": "story_type"}).assign(topic=None)
    rows = pd.Series(chosen + 2, index=sample.index)
    return _tables(
        sample.reset_index(drop=True),
        rows.reset_index(drop=True),
        ["context", "right_ending", "wrong_ending"],
        "group",
    )


SAMPLED = ("hanna", "rocstories")
"""The corpora this module samples (config ``stories:``)."""


def sample_corpus(
    corpus: str, path: str | Path, settings: dict[str, Any]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The stories, exclusions and counts of ``corpus`` (one of :data:`SAMPLED`) as config
    ``stories.<corpus>`` (``settings``) draws them."""
    if corpus == "hanna":
        return hanna_stories(path, settings["prompts"], int(settings["seed"]))
    if corpus == "rocstories":
        return rocstories_stories(path, settings["stories"], int(settings["seed"]))
    raise StoryflowError(f"no story sample is defined for corpus {corpus!r}; known: {SAMPLED}")
