"""No-rate curves and the story statistics of tension.

Per cut: ``no_rate`` = endings judged *not* to capture the actual remainder / endings judged
(share, 0-1). Endings without a verdict (an empty forecast, an empty answer set) are counted in
``n_unjudged`` and left out of the denominator; a cut with no judged ending has a NaN no-rate
and is left out of the curve.

Per story (its curve: no-rate against pct, cuts in story order):

- ``no_rate``: the mean no-rate over its cuts (0-1);
- ``late_no_rate``: the mean over cuts with pct >= ``late_pct`` (0.80; NaN when none);
- ``retention``: post-spike retention. A *peak* is a cut whose no-rate is strictly above both
  neighbours' (first and last cuts are never peaks); its drop is the peak's no-rate minus the
  minimum of the next ``window`` (10) cuts; ``retention`` is the mean drop over peaks (0-1,
  larger = tension released faster after a spike). NaN with no peak;
- ``inflection_rate_<α>``: the curve is smoothed by a centred moving average over 3 cuts (2 at
  either end), rescaled to the unit square (pct and smoothed no-rate each min-max scaled; a flat
  axis maps to 0), and a cut is a *reversal* where the smoothed curve changes direction (strictly
  up then strictly down, or the reverse); the rate is the share of the story's cuts that are a
  reversal whose vertex angle (between the segments to its two neighbours, in degrees; 180 =
  straight) is at most α.

Curve statistics need at least ``min_cuts`` (3) cuts; a story with fewer gets NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from storyflow import tables


@dataclass(frozen=True)
class CurveSettings:
    """Story statistics' settings (see the module docstring)."""

    late_pct: float = 0.80
    window: int = 10
    smoothing: int = 3
    angles: tuple[float, ...] = (30.0, 60.0, 120.0)
    min_cuts: int = 3


def cut_no_rates(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per story × cut: n_samples, n_judged, n_no, n_unjudged and no_rate (NaN if none judged).

    ``judgments`` (:data:`tables.TENSION_JUDGMENTS`): one row per ending, ``match`` True/False or
    missing (no verdict).
    """
    keys = ["story_id", "story_type", "model", "judge", "cut", "sentence_idx", "pct"]
    frame = judgments.assign(
        _judged=judgments["match"].notna(),
        _no=judgments["match"].eq(False).fillna(False).astype(bool),
    )
    out = (
        frame.groupby(keys, sort=False)
        .agg(n_samples=("sample", "size"), n_judged=("_judged", "sum"), n_no=("_no", "sum"))
        .reset_index()
    )
    out["n_unjudged"] = out["n_samples"] - out["n_judged"]
    with np.errstate(invalid="ignore", divide="ignore"):
        out["no_rate"] = np.where(out["n_judged"] > 0, out["n_no"] / out["n_judged"], np.nan)
    return tables.TENSION_CURVES.frame(out.sort_values(["story_id", "cut"], kind="stable"))


def moving_average(values: Sequence[float], width: int = 3) -> np.ndarray:
    """Centred moving average over ``width`` points (fewer at the ends: what is there)."""
    series = pd.Series(np.asarray(values, dtype=float))
    return series.rolling(width, center=True, min_periods=1).mean().to_numpy()


def unit_square(values: Sequence[float]) -> np.ndarray:
    """``values`` min-max scaled to [0, 1]; all zeros when they are all equal."""
    arr = np.asarray(values, dtype=float)
    span = arr.max() - arr.min()
    return np.zeros_like(arr) if span == 0 else (arr - arr.min()) / span


def vertex_angle(before: Sequence[float], vertex: Sequence[float], after: Sequence[float]) -> float:
    """Angle at ``vertex`` between the segments to ``before`` and ``after`` (degrees, 0-180)."""
    a = np.asarray(before, float) - np.asarray(vertex, float)
    b = np.asarray(after, float) - np.asarray(vertex, float)
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    return math.degrees(math.acos(max(-1.0, min(1.0, cos))))


def reversals(
    pct: Sequence[float], no_rate: Sequence[float], smoothing: int = 3
) -> list[tuple[int, float]]:
    """``(cut position, vertex angle)`` of each reversal of the smoothed, rescaled curve."""
    x = unit_square(pct)
    y = unit_square(moving_average(no_rate, smoothing))
    found = []
    for j in range(1, len(y) - 1):
        left, right = np.sign(y[j] - y[j - 1]), np.sign(y[j + 1] - y[j])
        if left != 0 and right != 0 and left != right:
            found.append(
                (j, vertex_angle((x[j - 1], y[j - 1]), (x[j], y[j]), (x[j + 1], y[j + 1])))
            )
    return found


def post_spike_drops(no_rate: Sequence[float], window: int = 10) -> list[float]:
    """For each peak (strictly above both neighbours), its drop to the minimum of the next
    ``window`` cuts."""
    y = np.asarray(no_rate, dtype=float)
    return [
        float(y[j] - y[j + 1 : j + 1 + window].min())
        for j in range(1, len(y) - 1)
        if y[j] > y[j - 1] and y[j] > y[j + 1]
    ]


def curve_statistics(
    pct: Sequence[float], no_rate: Sequence[float], settings: CurveSettings
) -> dict[str, float]:
    """The statistics of one curve (cuts with a no-rate, in story order)."""
    pct, y = np.asarray(pct, float), np.asarray(no_rate, float)
    late = y[pct >= settings.late_pct]
    stats = {
        "n_cuts": len(y),
        "no_rate": float(y.mean()) if len(y) else math.nan,
        "late_no_rate": float(late.mean()) if len(late) else math.nan,
    }
    enough = len(y) >= settings.min_cuts
    drops = post_spike_drops(y, settings.window) if enough else []
    stats["retention"] = float(np.mean(drops)) if drops else math.nan
    turns = reversals(pct, y, settings.smoothing) if enough else []
    for alpha in settings.angles:
        stats[angle_column(alpha)] = (
            sum(angle <= alpha for _, angle in turns) / len(y) if enough else math.nan
        )
    return stats


def angle_column(alpha: float) -> str:
    """Column name of the inflection rate at threshold ``alpha`` degrees."""
    return f"inflection_rate_{alpha:g}"


def story_statistics(curves: pd.DataFrame, settings: CurveSettings) -> pd.DataFrame:
    """One row per story × model × judge: n_cuts, no_rate, late_no_rate, retention and the
    inflection rates (:data:`tables.TENSION_STORIES`, plus one column per angle)."""
    rows = []
    keys = ["story_id", "story_type", "model", "judge"]
    for key, grp in curves.groupby(keys, sort=False):
        kept = grp.sort_values("cut").dropna(subset=["no_rate"])
        stats = curve_statistics(kept["pct"], kept["no_rate"], settings)
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                **stats,
                "n_unjudged": int(grp["n_unjudged"].sum()),
            }
        )
    columns = [*tables.TENSION_STORIES.names, *map(angle_column, settings.angles)]
    frame = pd.DataFrame(rows, columns=columns)
    return tables.TENSION_STORIES.frame(frame)
