"""Which measures separate which groups? Hedges' g of every measure for every contrast.

A contrast "a vs b" of a corpus (imagined vs recalled, fiction vs non-fiction, the human story vs
an LLM's for the same HANNA prompts) splits the story table's stories by their labels
(:func:`storyflow.stats.contrast_members`); for each model and measure, g is the bias-corrected
standardised mean difference mean(a) − mean(b) with its normal-approximation CI
(:func:`storyflow.stats.hedges_g`), over the stories with a score. g is unitless, so measures in
nats, bits and shares sit on one axis. g > 0: group a scores higher.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from storyflow import stats, tables
from storyflow.comparison.story_table import measure_columns
from storyflow.comparison.verdicts import LABELS, mark


def _model_free_once(table: pd.DataFrame, labels: pd.DataFrame, free: set[str]) -> pd.DataFrame:
    """The story table with the ``free`` measures (those that depend on no model, repeated on
    every model's row) moved to one row per story with model ``""`` (``labels``: the table's
    first row of each story)."""
    shared = labels.assign(model="")
    return pd.concat(
        [table[table["model"] != ""].drop(columns=list(free & set(table.columns))), shared],
        ignore_index=True,
    )


def separation(
    table: pd.DataFrame,
    contrasts: Sequence[Mapping[str, object]],
    *,
    model_free: Sequence[str] = (),
    confidence: float,
    min_group_size: int,
    verdicts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The :data:`~storyflow.tables.MEASURE_SEPARATION` rows of a story table: one per contrast,
    model and measure. A side with fewer than ``min_group_size`` (config
    ``stats.min_group_size``; at least 2) scored stories is not tested: NaN g, with its n and
    means. ``valid`` and ``failed`` from ``verdicts`` (:func:`storyflow.comparison.verdicts.mark`;
    None: every row valid).

    ``model_free``: measures that depend on no model (repeated on every model's row of the story
    table); each gets one row per contrast, with model ``""``.
    """
    labels = table.drop_duplicates("story_id")
    free = set(model_free)
    if free:
        table = _model_free_once(table, labels, free)
    members = stats.contrast_members(labels, contrasts)
    rows = []
    for contrast in contrasts:
        name = str(contrast["name"])
        side_a, side_b = members[name]
        for model, part in table.groupby("model", sort=True):
            in_a, in_b = part["story_id"].isin(side_a), part["story_id"].isin(side_b)
            for measure in measure_columns(part):
                if (model == "") != (measure in free):
                    continue
                a = part.loc[in_a, measure].dropna().to_numpy(float)
                b = part.loc[in_b, measure].dropna().to_numpy(float)
                if not (len(a) or len(b)):
                    continue  # the measure was not computed with this model
                tested = min(len(a), len(b)) >= max(2, min_group_size)
                g, low, high = stats.hedges_g(a, b, confidence) if tested else (math.nan,) * 3
                rows.append(
                    {
                        "contrast": name,
                        "group_a": stats.group_label(contrast, "a"),
                        "group_b": stats.group_label(contrast, "b"),
                        "model": model,
                        "measure": measure,
                        "n_a": len(a),
                        "n_b": len(b),
                        "mean_a": float(np.mean(a)) if len(a) else math.nan,
                        "mean_b": float(np.mean(b)) if len(b) else math.nan,
                        "g": g,
                        "g_low": low,
                        "g_high": high,
                        "tested": tested,
                    }
                )
    frame = tables.MEASURE_SEPARATION.partial(rows, omit=LABELS)
    if verdicts is None:
        verdicts = tables.MEASURE_VERDICTS.frame([])
    return tables.MEASURE_SEPARATION.frame(mark(frame, verdicts, [("measure", "model")]))


def corpus_contrasts(
    corpus: str, declared: Sequence[Mapping[str, object]], story_types: Sequence[str]
) -> list[Mapping[str, object]]:
    """The contrasts a corpus declares in the config; HANNA's are the human story vs each LLM's
    and vs all LLMs (:func:`storyflow.corpora.hanna.human_contrasts`), over the groups present."""
    if corpus == "hanna":
        from storyflow.corpora.hanna import human_contrasts

        return human_contrasts(story_types)
    return list(declared)
