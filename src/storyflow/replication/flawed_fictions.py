"""FlawedFictions (Ahuja et al.) beside ours: CEEval-Full and accuracy of the baselines and the
detectors on the published benchmark, and the detection rates of human vs LLM stories.

The paper's Tables 5 and 6 score detectors on its own benchmark (FlawedFictions and
FlawedFictionsLong). Ours is only comparable on that file: when ``plot_holes.benchmark`` names it,
``results/flawedfictions/plot_holes/tables/scores.csv`` scores the baselines and the configured
detectors on it, and each published baseline row is read there (``Always No Error Baseline`` =
``baseline:always-no``, ``Random Baseline`` = ``baseline:random``, ``Entailment Baseline`` = an
``nli:<model>`` row, storyflow's model-as-NLI stand-in for the paper's DeBERTa classifier). A
published model row is compared only with a configured detector of the same name. The paper's
detection-rate finding (§6: a detector flags LLM-written stories more often than the originals)
is read on HANNA's human-vs-LLM rates, a different task (free writing on the same prompts),
from the valid detector with the best CEEval-Full gain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.replication.agreement import Ours

#: The paper's baselines by storyflow's detector label (a prefix for the NLI stand-in).
BASELINES = {
    "Always No Error Baseline": "baseline:always-no",
    "Random Baseline": "baseline:random",
    "Entailment Baseline": "nli:",
}
#: Published quantities with storyflow's column and interval columns (None: no interval).
QUANTITIES = {
    "ceeval_full": ("ceeval_full", ("ceeval_ci_low", "ceeval_ci_high")),
    "accuracy": ("accuracy", None),
    "ceeval_pos": ("ceeval_pos", None),
}


def _validity(row: pd.Series) -> str:
    """'valid', 'failed: <checks>' or 'not checked (<why>)' of a scores or rates row."""
    text = str(row["validity"] or "")
    return "valid" if text == "passed" else text or "not checked"


def _score(row: Mapping[str, Any], scores: pd.DataFrame | None) -> Ours:
    if row["corpus"] != "flawedfictions":
        return Ours.missing(f"storyflow has no {row['corpus']} file (only FlawedFictions)")
    if row["quantity"] not in QUANTITIES:
        return Ours.missing(f"storyflow does not compute {row['quantity']}")
    if scores is None:
        return Ours.missing(
            "the FlawedFictions file is not configured (plot_holes.benchmark): its scores are "
            "only comparable on the published stories"
        )
    model = str(row["model"])
    label = BASELINES.get(model, model)
    if row["group"] == "human":
        return Ours.missing("storyflow has no human detection of the benchmark")
    hit = scores[
        scores["detector"].str.startswith(label)
        if label.endswith(":")
        else scores["detector"].eq(label)
    ]
    if hit.empty:
        return Ours.missing(f"no detector {label!r} scored the benchmark in this run")
    found = hit.iloc[0]
    column, interval = QUANTITIES[str(row["quantity"])]
    ci = (
        (float(found[interval[0]]), float(found[interval[1]])) if interval else (math.nan, math.nan)
    )
    note = (
        ""
        if label != "nli:"
        else (f"{found['detector']}: a model asked as NLI, not the paper's DeBERTa-v3-large MNLI")
    )
    return Ours(
        float(found[column]), ci, "", f"{int(found['n'])} story versions",
        str(found["detector"]), _validity(found), note, False,
    )  # fmt: skip


def _rates(row: Mapping[str, Any], rates: pd.DataFrame | None) -> Ours:
    if str(row["direction"]) != "llm > original":
        return Ours.missing(
            f"storyflow does not run the paper's {row['setting'].split(':')[0]} experiment"
        )
    if rates is None:
        return Ours.missing("plot holes do not score HANNA in this run")
    best = rates[rates["best"].astype(bool)]
    if best.empty:
        return Ours.missing("no detector passed its validity check (no valid detector to read)")
    detector = best["detector"].iloc[0]
    mine = best[best["detector"] == detector]
    difference = float(mine["difference"].mean())
    order = "llm > original" if difference > 0 else "original > llm"
    return Ours(
        difference, (math.nan, math.nan), order,
        f"{int(mine['n_prompts'].max())} HANNA prompts, {len(mine)} LLMs",
        str(detector), _validity(mine.iloc[0]),
        "HANNA: the share of each LLM's stories called flawed minus the human story's, on the "
        "same prompts, mean over the LLMs; free writing, not the paper's summaries or retellings",
        False,
    )  # fmt: skip


def ours(
    published: pd.DataFrame, files: Mapping[str, Sequence[str]], settings: Mapping[str, Any]
) -> dict[str, Ours]:
    """Our figure for every published FlawedFictions row, by id (see the module docstring)."""
    del settings
    scores = (
        tables.read(tables.PLOT_HOLE_SCORES, files["benchmark_scores"][0])
        if "benchmark_scores" in files
        else None
    )
    rates = (
        tables.read(tables.PLOT_HOLE_RATES, files["hanna_rates"][0])
        if "hanna_rates" in files
        else None
    )
    found: dict[str, Ours] = {}
    for row in published.to_dict("records"):
        if row["quantity"] == "detection_rate":
            found[row["id"]] = _rates(row, rates)
        elif row["quantity"] in QUANTITIES:
            found[row["id"]] = _score(row, scores)
        else:
            found[row["id"]] = Ours.missing(f"storyflow does not compute {row['quantity']}")
    return found
