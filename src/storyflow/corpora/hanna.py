"""HANNA (Chhun et al. 2022): 96 writing prompts, each with a human story and six LLMs' stories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from storyflow.corpora.base import limit_groups, read_csv_columns
from storyflow.errors import InputDataError

HANNA_URL = (
    "https://raw.githubusercontent.com/dig-team/hanna-benchmark-asg/main/hanna_llm_stories.csv"
)
HANNA_HUMAN = "Human"


def _human_and_model_stories(table: pd.DataFrame) -> pd.DataFrame:
    """The CSV's stories: each prompt's human story once (from its first row), then every
    row's model story; columns prompt_id (0-based prompt order), row (CSV row, header = 1),
    prompt, group and text."""
    prompt_id = pd.Series(pd.factorize(table["Prompt"])[0], index=table.index)
    human = table.assign(prompt_id=prompt_id).drop_duplicates("prompt_id")
    parts = [
        pd.DataFrame(
            {
                "prompt_id": human["prompt_id"],
                "row": human.index + 2,
                "prompt": human["Prompt"],
                "group": HANNA_HUMAN,
                "text": human[HANNA_HUMAN],
            }
        ),
        pd.DataFrame(
            {
                "prompt_id": prompt_id,
                "row": table.index + 2,
                "prompt": table["Prompt"],
                "group": table["Model"],
                "text": table["Story"],
            }
        ),
    ]
    return pd.concat(parts, ignore_index=True)


def read_hanna(path: str | Path, limit: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """HANNA LLM stories: one human story per prompt plus each model's story for it.

    The ``Human`` column repeats the prompt's human story on each model's row: it is kept once
    per prompt. Stories are kept as written (chat artefacts such as a leading ``Human:`` turn
    included, see ``docs/narrative_sense.md``); ``artefact`` flags stories that contain a
    speaker label (``Human:``/``Assistant:``/``User:``) so they are counted, not dropped.

    Returns:
        ``stories`` (story_id, group, text, plus ``prompt_id`` (int, 0-based prompt order),
        ``row`` (its CSV row, header = 1; a human story: its prompt's first row), ``prompt`` (the
        writing prompt) and ``artefact`` (bool)); ``group`` = ``"Human"`` or the model name;
        ``story_id`` = ``"<group>-<prompt_id>"``. A row whose ``Model`` cell is empty keeps
        group ``""`` and story_id ``"no-model-row<row>"``: the sample excludes it with the
        reason (:mod:`storyflow.corpora.selection`). And ``counts``: group, n_stories,
        n_artefact.
    """
    table = read_csv_columns(
        path,
        ["Prompt", HANNA_HUMAN, "Story", "Model"],
        f"Download it from {HANNA_URL} into the data mirror (or set narrative_sense.hanna).",
    )
    stories = _human_and_model_stories(table)
    stories["group"] = stories["group"].str.strip()
    stories["story_id"] = (stories["group"] + "-" + stories["prompt_id"].astype(str)).where(
        stories["group"] != "", "no-model-row" + stories["row"].astype(str)
    )
    if stories["story_id"].duplicated().any():
        dup = stories.loc[stories["story_id"].duplicated(), "story_id"].iloc[0]
        raise InputDataError(path, f"two stories for the same prompt and model ({dup})")
    stories["artefact"] = stories["text"].str.contains(
        r"(?:^|\n)\s*(?:Human|Assistant|User)\s*:", regex=True
    )
    stories = limit_groups(
        stories[["story_id", "group", "text", "prompt_id", "row", "prompt", "artefact"]], limit
    )
    counts = (
        stories.groupby("group", sort=False)
        .agg(n_stories=("story_id", "size"), n_artefact=("artefact", "sum"))
        .reset_index()
    )
    return stories, counts


def human_contrasts(story_types: Sequence[str]) -> list[Mapping[str, object]]:
    """HANNA's contrasts: the human story vs each LLM's, and vs all LLMs' together.

    ``story_types``: the groups present (``"Human"`` and the LLM names). Each contrast is a
    :data:`storyflow.stats.Group` pair named ``human_vs_<llm>`` (``human_vs_llms`` for all).
    """
    llms = sorted(set(story_types) - {HANNA_HUMAN})
    if HANNA_HUMAN not in set(story_types) or not llms:
        return []
    each = [{"name": f"human_vs_{llm}", "a": HANNA_HUMAN, "b": llm} for llm in llms]
    every = {
        "name": "human_vs_llms",
        "a": HANNA_HUMAN,
        "b": {"story_type": llms},
        "label_b": "all LLMs",
    }
    return [*each, every]
