"""100-Endings (Sui et al.) beside ours: the order of human and LLM stories by tension.

The paper's file gives orders only, no corpus-level values, and none of its corpora is
storyflow's (New Yorker stories, amateur and published human corpora, top-10 LLMs on EQ-Bench
prompts; hundred_endings_tension.txt l. 72, 79). The one order storyflow can test is whether
human-written stories have a higher no-rate than LLM-written ones: on HANNA, the human story
of each WritingPrompts prompt against the six LLMs' stories for the same prompt (the paired
contrast ``Human vs all LLMs`` of ``results/hanna/tension/tables/effects.csv``: the mean over
prompts of human minus the prompt's mean LLM value, with its bootstrap CI over prompts). A row
naming a corpus storyflow does not have (New Yorker) or a procedure it does not implement (the
generation pipeline, EQ-Bench's rubric) says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.replication.judging import Ours, result_table

#: The HANNA contrast that stands for "human-written above LLM-written".
HUMAN_VS_LLM = "Human vs all LLMs"
#: Published orders that HANNA's human-vs-LLM contrast tests, by measure.
TESTED = {
    "every human corpus > top10_llm": "no_rate",
}
#: Why the other published rows have no counterpart, by a word of their direction.
UNTESTED = {
    "new_yorker": "storyflow has no New Yorker corpus (HANNA's human stories are amateurs'; "
    "the human-above-LLM order is tested on them in its own row)",
    "pipeline": "storyflow does not implement the paper's story-generation pipeline",
}


def _why_not(row: Mapping[str, Any]) -> str:
    """Why a published row has no counterpart in storyflow."""
    if row["quantity"] not in ("no_rate", "late_no_rate"):
        return f"storyflow does not compute {row['quantity']}"
    direction = str(row["direction"])
    return next((why for key, why in UNTESTED.items() if key in direction), "no counterpart")


def _headline(effects: pd.DataFrame, measure: str) -> pd.Series | None:
    """The Human vs all-LLMs row of ``measure``: artefact stories included, valid forecaster and
    judge first, an LLM judge before the embedding judge (the paper judges with an LLM)."""
    rows = effects[
        (effects["contrast"] == HUMAN_VS_LLM)
        & (effects["measure"] == measure)
        & (effects["artefacts"] == "included")
    ]
    if rows.empty:
        return None
    order = rows.assign(
        _valid=~rows["valid"].astype(bool), _embedding=rows["judge"].eq("embedding")
    ).sort_values(["_valid", "_embedding", "model", "judge"], kind="stable")
    return order.iloc[0]


def ours(
    published: pd.DataFrame, files: Mapping[str, Sequence[str]], settings: Mapping[str, Any]
) -> dict[str, Ours]:
    """Our figure for every published 100-Endings row, by id (see the module docstring)."""
    del settings
    effects = result_table(tables.TENSION_EFFECTS, files, "hanna_effects")
    found: dict[str, Ours] = {}
    for row in published.to_dict("records"):
        direction = str(row["direction"])
        if direction not in TESTED:
            found[row["id"]] = Ours.missing(_why_not(row))
            continue
        if effects is None:
            found[row["id"]] = Ours.missing("tension does not score HANNA in this run")
            continue
        hit = _headline(effects, TESTED[direction])
        if hit is None or not math.isfinite(hit["diff"]):
            found[row["id"]] = Ours.missing(
                f"no tested {HUMAN_VS_LLM} contrast of {TESTED[direction]} "
                f"({'' if hit is None else hit['flag']})"
            )
            continue
        left, right = (part.strip() for part in direction.split(">", 1))
        order = direction if hit["diff"] > 0 else f"{right} > {left}"
        found[row["id"]] = Ours(
            float(hit["diff"]),
            (float(hit["diff_ci_low"]), float(hit["diff_ci_high"])),
            order,
            f"{int(hit['n_a'])} prompts (human story vs the mean of its LLM stories)",
            f"forecaster {hit['model']}, judge {hit['judge']}, K = {int(hit['k'])}",
            "valid" if bool(hit["valid"]) else f"failed: {hit['failed']}",
            "HANNA human (amateur WritingPrompts) vs six LLMs, not the paper's corpora; ours is "
            "the mean paired difference human - LLM of the story no-rate",
            False,
            units=float(hit["n_a"]),
        )
    return found
