"""Do the measures agree? Rank correlations between story scores, with bootstrap CIs.

For two measures x and y over the stories that have both (pairwise complete):

- **Spearman's ρ** = Pearson's correlation of their ranks (ties get their average rank);
- **partial ρ given length** = the correlation of the ranks of x and y once the rank of the
  story's length z is partialled out of both::

      ρ_xy·z = (ρ_xy − ρ_xz ρ_yz) / sqrt((1 − ρ_xz²)(1 − ρ_yz²))

  (all three Spearman's ρ). Length is the obvious common cause of most story-level scores: a
  pair that correlates only through length has ρ far from 0 and ρ_xy·z near 0.

CIs are percentile bootstrap intervals (:func:`storyflow.bootstrap.interval`: stories resampled
with replacement, the same resamples for x, y and z, seeded): with a few dozen stories the
distribution of ρ is skewed and a normal interval would leave [-1, 1]. Every row names its n.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from storyflow import bootstrap, tables
from storyflow.comparison.story_table import measure_columns
from storyflow.comparison.verdicts import LABELS, mark

MIN_STORIES = 5
"""Fewest stories with both scores for a correlation (fewer: NaN, with n in the row)."""


def _ranks(x: np.ndarray, axis: int) -> np.ndarray:
    return sps.rankdata(x, axis=axis)


def _pearson(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    a = a - a.mean(axis=axis, keepdims=True)
    b = b - b.mean(axis=axis, keepdims=True)
    denominator = np.sqrt((a * a).sum(axis=axis) * (b * b).sum(axis=axis))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a * b).sum(axis=axis) / denominator


def spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's ρ along ``axis`` (vectorised over the other axes; NaN for a constant input)."""
    return _pearson(_ranks(x, axis), _ranks(y, axis), axis)


def partial_spearman(x: np.ndarray, y: np.ndarray, z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's ρ of x and y with z partialled out (module docstring), along ``axis``."""
    rx, ry, rz = (_ranks(v, axis) for v in (x, y, z))
    xy, xz, yz = _pearson(rx, ry, axis), _pearson(rx, rz, axis), _pearson(ry, rz, axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (xy - xz * yz) / np.sqrt((1 - xz**2) * (1 - yz**2))


def _pair(
    x: np.ndarray, y: np.ndarray, z: np.ndarray, *, resamples: int, confidence: float, seed: int
) -> dict[str, float]:
    keep = ~(np.isnan(x) | np.isnan(y) | np.isnan(z))
    x, y, z = x[keep], y[keep], z[keep]
    row: dict[str, float] = {"n": int(keep.sum())}
    usable = row["n"] >= MIN_STORIES and np.ptp(x) > 0 and np.ptp(y) > 0
    if not usable:
        return row | dict.fromkeys(
            ("rho", "rho_low", "rho_high", "partial", "partial_low", "partial_high"), math.nan
        )
    options: dict[str, Any] = {
        "resamples": resamples,
        "confidence": confidence,
        "seed": seed,
        "paired": True,
    }
    row["rho"] = float(spearman(x, y))
    row["rho_low"], row["rho_high"] = bootstrap.interval((x, y), spearman, **options)
    if np.ptp(z) > 0:
        row["partial"] = float(partial_spearman(x, y, z))
        row["partial_low"], row["partial_high"] = bootstrap.interval(
            (x, y, z), partial_spearman, **options
        )
    else:
        row["partial"] = row["partial_low"] = row["partial_high"] = math.nan
    return row


def correlations(
    table: pd.DataFrame,
    *,
    length: str,
    resamples: int,
    confidence: float,
    seed: int,
    verdicts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Spearman's ρ and ρ given ``length`` for every pair of measures, per model, with CIs;
    ``valid`` and ``failed`` from ``verdicts`` (:data:`~storyflow.tables.MEASURE_VERDICTS`,
    :func:`storyflow.comparison.verdicts.mark`; None: every row valid).

    ``table``: a story table (:mod:`storyflow.comparison.story_table`); per model, its measures
    with at least one score enter, and each measure is also paired with ``length`` itself
    (``n_words`` or ``n_sentences``; its partial correlation is then undefined, NaN). Rows of the
    :data:`~storyflow.tables.MEASURE_CORRELATIONS` table, both orders of each pair (a full
    matrix), the diagonal included (ρ = 1).
    """
    rows = []
    for model, part in table.groupby("model", sort=True):
        present = [m for m in measure_columns(part) if part[m].notna().any()]
        columns = [length, *present]
        z = part[length].to_numpy(float)
        for a, b in itertools.combinations_with_replacement(columns, 2):
            x, y = part[a].to_numpy(float), part[b].to_numpy(float)
            if a == b:
                n = int((~np.isnan(x)).sum())
                stat = dict.fromkeys(("rho", "rho_low", "rho_high"), 1.0)
                stat |= dict.fromkeys(("partial", "partial_low", "partial_high"), math.nan)
                stat["n"] = n
            else:
                stat = _pair(x, y, z, resamples=resamples, confidence=confidence, seed=seed)
                if length in (a, b):
                    stat |= dict.fromkeys(("partial", "partial_low", "partial_high"), math.nan)
            for first, second in dict.fromkeys([(a, b), (b, a)]):  # in order: a set's is random
                rows.append({"model": model, "measure_a": first, "measure_b": second} | stat)
    frame = tables.MEASURE_CORRELATIONS.partial(rows, omit=LABELS)
    frame = mark(frame, _verdicts(verdicts), [("measure_a", "model"), ("measure_b", "model")])
    return tables.MEASURE_CORRELATIONS.frame(frame)


def model_agreement(
    measures: pd.DataFrame,
    *,
    resamples: int,
    confidence: float,
    seed: int,
    verdicts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """For every measure computed with two or more models: Spearman's ρ of the story scores of
    each pair of models, with its bootstrap CI (does the measure describe the story or the
    model?). ``measures``: the measures' :data:`~storyflow.tables.STORY_MEASURES` rows;
    ``verdicts`` as in :func:`correlations`."""
    rows = []
    scored = measures[measures["model"] != ""]
    for measure, part in scored.groupby("measure", sort=True):
        wide = part.pivot(index="story_id", columns="model", values="value")
        for model_a, model_b in itertools.combinations(sorted(wide.columns), 2):
            x, y = wide[model_a].to_numpy(float), wide[model_b].to_numpy(float)
            stat = _pair(
                x, y, np.zeros_like(x), resamples=resamples, confidence=confidence, seed=seed
            )
            rows.append(
                {
                    "measure": measure,
                    "model_a": model_a,
                    "model_b": model_b,
                    "n": stat["n"],
                    "rho": stat["rho"],
                    "rho_low": stat["rho_low"],
                    "rho_high": stat["rho_high"],
                }
            )
    frame = tables.MODEL_AGREEMENT.partial(rows, omit=LABELS)
    frame = mark(frame, _verdicts(verdicts), [("measure", "model_a"), ("measure", "model_b")])
    return tables.MODEL_AGREEMENT.frame(frame)


def _verdicts(verdicts: pd.DataFrame | None) -> pd.DataFrame:
    return tables.MEASURE_VERDICTS.frame([]) if verdicts is None else verdicts
