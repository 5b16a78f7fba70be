"""FlawedFictions (Ahuja et al.) beside ours: CEEval-Full and accuracy of the baselines and the
detectors on the published benchmark, and the detection rates of human vs LLM stories.

The paper's Tables 5 and 6 score detectors on its own benchmark (FlawedFictions and
FlawedFictionsLong). Ours is only comparable on that file: when ``plot_holes.benchmark`` names it,
``results/flawedfictions/plot_holes/tables/scores.csv`` scores the baselines and the configured
detectors on it, and each published baseline row is read there (``Always No Error Baseline`` =
``baseline:always-no``, ``Random Baseline`` = ``baseline:random``; the ``Entailment Baseline``
is set beside an ``nli:<model>`` row, storyflow's model-as-NLI stand-in for the paper's DeBERTa
classifier, and not judged). A published model row is compared only with a configured detector
of the same name *and* the same setting: the paper's rows differ by prompt (vanilla, few-shot,
chain of thought; Figures 12-14) and reasoning effort, and storyflow's detectors answer either a
closed yes/no question (``plot_holes.detection.format: closed``, no setting of the paper) or the
one free-form prompt (``paper``: storyflow's wording of the vanilla prompt, Figure 12), so only
the vanilla rows can match. A model's row a sentence of the paper reads as a comparison (a
direction: one detector above another, or no better than a baseline) is not computed: its
counterpart would be the difference of two scores with its interval, which storyflow does not
form.
Accuracy gets a Wilson interval over the story versions scored. The paper's detection-rate
finding (§6: a detector flags LLM-written stories more often than the originals) is read on
HANNA's pooled human-vs-LLM row (every LLM's stories against the human story of the same
prompt, a bootstrap interval over prompts), a different task (free writing on the same
prompts), from the valid detector with the best CEEval-Full gain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.replication.judging import Ours, result_table
from storyflow.tables.plot_holes import ALL_LLMS
from storyflow.validity import wilson_interval

#: The paper's baselines by storyflow's detector label (a prefix for the NLI stand-in).
BASELINES = {
    "Always No Error Baseline": "baseline:always-no",
    "Random Baseline": "baseline:random",
    "Entailment Baseline": "nli:",
}
#: Published quantities with storyflow's column and interval columns (None: no interval;
#: ``wilson``: a Wilson interval of the share over the story versions scored).
QUANTITIES = {
    "ceeval_full": ("ceeval_full", ("ceeval_ci_low", "ceeval_ci_high")),
    "accuracy": ("accuracy", "wilson"),
    "ceeval_pos": ("ceeval_pos", None),
}
#: The one published detector setting storyflow's free-form answers follow (format paper).
VANILLA = "vanilla prompt (Figure 12)"


def _validity(row: pd.Series) -> str:
    """'valid', 'failed: <checks>' or 'not checked (<why>)' of a scores or rates row."""
    text = str(row["validity"] or "")
    return "valid" if text == "passed" else text or "not checked"


def _setting_mismatch(row: Mapping[str, Any], detection: Mapping[str, Any]) -> str:
    """Why a published model row's setting is not the run's ('' when it is)."""
    if detection["format"] != "paper":
        return (
            "storyflow's detectors answered a closed yes/no question "
            "(plot_holes.detection.format: closed), not a setting of the paper"
        )
    if row["setting"] != VANILLA:
        return f"the paper's {row['setting']}; storyflow's free-form detectors answer the {VANILLA}"
    return ""


def _score(
    row: Mapping[str, Any],
    scores: pd.DataFrame | None,
    detection: Mapping[str, Any],
    confidence: float,
) -> Ours:
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
    if row["group"] == "model":
        mismatch = _setting_mismatch(row, detection)
        if mismatch:
            return Ours.missing(mismatch)
    claim = str(row["direction"] or "").strip()
    if claim and model not in BASELINES:  # a baseline's claim is of its own score
        return Ours.missing(
            f"the paper's sentence compares two scores ({claim!r}); storyflow gives each "
            "detector's own score, not their difference with an interval"
        )
    hit = scores[
        scores["detector"].str.startswith(label)
        if label.endswith(":")
        else scores["detector"].eq(label)
    ]
    if hit.empty:
        return Ours.missing(f"no detector {label!r} scored the benchmark in this run")
    found = hit.iloc[0]
    column, interval = QUANTITIES[str(row["quantity"])]
    value, n = float(found[column]), int(found["n"])
    ci = (math.nan, math.nan)
    if interval == "wilson" and math.isfinite(value):
        ci = wilson_interval(round(value * n), n, confidence)
    elif interval:
        ci = (float(found[interval[0]]), float(found[interval[1]]))
    nli = label == "nli:"
    note = (
        f"{found['detector']}: a model asked as NLI, not the paper's DeBERTa-v3-large MNLI"
        if nli
        else (
            f"storyflow's wording of the vanilla prompt, temperature {detection['temperature']} "
            "(the paper: 0.5)"
            if row["group"] == "model"
            else ""
        )
    )
    return Ours(
        value, ci, "", f"{n} story versions", str(found["detector"]), _validity(found), note,
        False, incomparable="another classifier than the paper's" if nli else "", units=float(n),
        unit="story versions",
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
    mine = best[best["detector"] == detector].set_index("group")
    if ALL_LLMS not in mine.index:
        return Ours.missing(f"the rates table has no {ALL_LLMS!r} row (made by an older storyflow)")
    pooled = mine.loc[ALL_LLMS]
    difference = float(pooled["difference"])
    order = "llm > original" if difference > 0 else "original > llm"
    return Ours(
        difference, (float(pooled["ci_low"]), float(pooled["ci_high"])), order,
        f"{int(pooled['n_prompts'])} HANNA prompts, {len(mine) - 1} LLMs",
        str(detector), _validity(pooled),
        "HANNA: the share of the LLM stories called flawed minus the human story's, paired by "
        "prompt; free writing, not the paper's summaries or retellings",
        False, units=float(pooled["n_prompts"]), unit="prompts",
    )  # fmt: skip


def ours(
    published: pd.DataFrame, files: Mapping[str, Sequence[str]], settings: Mapping[str, Any]
) -> dict[str, Ours]:
    """Our figure for every published FlawedFictions row, by id (see the module docstring)."""
    scores = result_table(tables.PLOT_HOLE_SCORES, files, "benchmark_scores")
    rates = result_table(tables.PLOT_HOLE_RATES, files, "hanna_rates")
    found: dict[str, Ours] = {}
    for row in published.to_dict("records"):
        if row["quantity"] == "detection_rate":
            found[row["id"]] = _rates(row, rates)
        elif row["quantity"] in QUANTITIES:
            found[row["id"]] = _score(
                row, scores, settings["detection"], float(settings["confidence"])
            )
        else:
            found[row["id"]] = Ours.missing(f"storyflow does not compute {row['quantity']}")
    return found
