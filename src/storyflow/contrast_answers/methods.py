"""The methods and results sentences of a study, written from its tables.

A paper that reports a storyflow contrast needs to say which models scored the stories and how
they ran, which formulation and histories the effect size reads, how it is aggregated, what the
design is and what was adjusted for, what the interval is, how many stories each group had, and
each contrast's numbers. :func:`methods_text` writes those sentences for one corpus from its
contrast answers (:data:`storyflow.tables.CONTRAST_ANSWERS`), the run's model provenance
(:data:`storyflow.tables.MODEL_PROVENANCE`) and the settings the answers were computed with, so
that no number in them is typed by hand (every number is a cell of those tables or a setting,
written by :func:`storyflow.replication.words.number` or as an integer).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from storyflow.contrast_answers.words import ADJUSTED, MATCHED, MEASURE, UNMATCHED
from storyflow.replication.words import number

#: What each design's effect size is, in words.
EFFECT_WORDS = {
    UNMATCHED: "Hedges' g (pooled SD), stories resampled within each group",
    MATCHED: "Lakens' g_av (the mean matched difference over the mean of the groups' SDs), "
    "whole blocks resampled",
    ADJUSTED: "the standardised group coefficient of a linear model holding story length "
    "(and the topic term, where there are topics) fixed, with a t interval",
}


def _said(value: object) -> str:
    return value if isinstance(value, str) else ""


def _models(provenance: pd.DataFrame, models: list[str]) -> str:
    """One clause per model: its family, size and variant, how it ran and its weights."""
    parts = []
    for row in provenance[provenance["model"].isin(models)].to_dict("records"):
        weights = _said(row["location"]) or _said(row["weights"])
        commit = f", commit {row['commit']}" if _said(row["commit"]) else ""
        ran = ", ".join(v for v in (_said(row["backend"]), _said(row["dtype"])) if v)
        parts.append(
            f"{row['family']} {row['size']} {row['variant']} ({row['model']}; "
            f"{ran}; weights {weights}{commit})"
        )
    return "; ".join(parts) or ", ".join(models)


def _estimate(row: Mapping[str, Any]) -> str:
    """'g_av = 0.312, 95% CI [0.0874, 0.52], a difference (group a higher)'."""
    g, low, high = float(row["g"]), float(row["ci_low"]), float(row["ci_high"])
    if not math.isfinite(g):
        return f"{row['effect_size']} not computed ({row['answer']})"
    level = f"{100 * float(row['confidence']):g}%"
    span = f", {level} CI [{number(low)}, {number(high)}]" if math.isfinite(low) else ""
    direction = f" ({row['direction']})" if _said(row["direction"]) else ""
    return f"{row['effect_size']} = {number(g)}{span}: {row['answer']}{direction}"


def _contrast(part: pd.DataFrame) -> str:
    """The results sentence of one contrast: its headline, then its other designs at the
    headline's formulation and histories, and the topic formulation's headline-like row."""
    head = part[part["headline"]].iloc[0]
    same = part[
        (part["formulation"] == head["formulation"]) & (part["histories"] == head["histories"])
    ]
    others = [
        r
        for r in same.to_dict("records")
        if r["design"] != head["design"] and r["model"] == head["model"]
    ]
    if head["model"] != "mean" or not others:
        others += [
            r
            for r in same.to_dict("records")
            if r["design"] == ADJUSTED and r["model"] != head["model"]
        ]
    unit = "blocks" if head["design"] == MATCHED else "stories"
    text = (
        f"For {head['group_a']} vs {head['group_b']} ({int(head['n_a'])} and "
        f"{int(head['n_b'])} stories; {int(min(head['units_a'], head['units_b']))} {unit} "
        f"resampled), the headline estimate is {_estimate(head)}."
    )
    if others:
        beside = "; ".join(f"{r['design']} ({r['model']}): {_estimate(r)}" for r in others)
        text += f" Beside it: {beside}."
    if head["answer"] == "inconclusive" and math.isfinite(float(head["n_to_decide"])):
        text += (
            f" At this estimate and spread, {int(head['n_to_decide'])} {unit} per group would "
            f"decide it: {_said(head['to_decide'])}."
        )
    return text


def methods_text(
    answers: pd.DataFrame,
    provenance: pd.DataFrame,
    settings: Mapping[str, Any],
    *,
    corpus: str,
) -> str:
    """The methods paragraph and one results sentence per contrast of ``corpus`` (Markdown).

    Args:
        answers: The corpus's contrast answers (its sequentiality rows are read).
        provenance: The run's model provenance table.
        settings: The answers' settings (:func:`storyflow.plan.contrast_answers.settings`):
            ``resamples``, ``seed``, ``band``, ``min_sentences``, ``max_history``.
    """
    rows = answers[answers["measure"] == MEASURE]
    if rows.empty:
        return f"# {corpus}: methods and results\n\nNo sequentiality contrast was answered.\n"
    head = rows[rows["headline"]].iloc[0]
    models = sorted(set(rows["model"]) - {"mean"})
    designs = list(dict.fromkeys(rows["design"]))
    level = f"{100 * float(head['confidence']):g}%"
    design_words = "; ".join(f"{d}: {EFFECT_WORDS[d]}" for d in designs)
    mean = " and averaged over the models" if "mean" in set(rows["model"]) else ""
    methods = (
        f"Sentence surprisal was scored with {len(models)} language model"
        f"{'s' if len(models) > 1 else ''}: {_models(provenance, models)}. "
        f"Story sequentiality is the mean over a story's sentences of the drop in negative "
        f"log-likelihood (nats/token) when the model sees the h preceding sentences, under the "
        f"context formulation (no topic term, Fiction Flows' SEQ') and, beside it, the topic "
        f"formulation. Stories with fewer than {int(settings['min_sentences'])} sentences were "
        f"left out. Each model's effect size is the median over h = 1 to "
        f"{int(settings['max_history'])}{mean}; the full history alone is reported beside it. "
        f"Designs: {design_words}. Intervals are {level} percentile bootstrap intervals "
        f"({int(settings['resamples'])} resamples, seed {int(settings['seed'])})"
        f"{', but for the adjusted rows' if ADJUSTED in designs else ''}. Each interval is "
        f"read against 0 and an equivalence band of "
        f"±{number(float(settings['band']))}: a difference when it excludes 0 and reaches "
        f"beyond the band, no difference when it lies inside the band, inconclusive when it "
        f"holds 0 and reaches beyond it (docs/method.md §5.1). The headline reads the "
        f"{head['formulation']} formulation, h {head['histories']}, the {head['design']} design "
        f"and {'the mean over the models' if head['model'] == 'mean' else head['model']}."
    )
    results = [_contrast(part) for _, part in rows.groupby("contrast", sort=False)]
    return (
        f"# {corpus}: methods and results\n\n"
        "Generated by storyflow from this run's tables (contrast_answers.csv, "
        "results/models.csv); every number is one of their cells.\n\n"
        f"## Methods\n\n{methods}\n\n## Results\n\n" + "\n\n".join(results) + "\n"
    )
