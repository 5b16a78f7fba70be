"""No-rate curves and the story statistics of tension.

Per cut, Sui et al.'s Eq. 4 (``hundred_endings_tension.txt`` l. 181, Eq. 6 at l. 197):
``no_rate`` = 1 − (endings judged to capture the actual remainder) / K, where K is the number
of endings sampled at the cut (``n_samples``, = ``tension.k``): a share, 0-1. The verdict j is 1
only when the judge says the ending captures the remainder, so an ending without a verdict (an
empty forecast, an empty answer set; counted in ``n_unjudged``) has j = 0 and counts as a miss:
``no_rate`` = (``n_no`` + ``n_unjudged``) / ``n_samples``. storyflow's earlier variant, the share
of the *judged* endings that miss, is kept beside it as ``no_rate_judged`` = ``n_no`` /
``n_judged`` (NaN when none was judged); it is not the headline and no statistic below uses it.

Per story (its curve: no-rate against pct, cuts in story order):

- ``no_rate``: the mean no-rate over its cuts (0-1; Eq. 7 of Sui et al., l. 197: the cuts are
  the positions kept by :mod:`storyflow.measures.tension.cuts`, 10-99 % of the tokens revealed
  in the paper's window);
- ``no_rate_judged``: the mean of the cuts' ``no_rate_judged`` (judged endings only; cuts with
  none judged left out; storyflow's variant, not the paper's);
- ``late_no_rate``: the mean over cuts with pct >= ``late_pct`` (0.80; NaN when none; the
  paper's late-stage no-rate, l. 203);
- ``post_spike_convergence``: how sharply tension resolves after a spike (Sui et al.). A *peak*
  is a cut whose no-rate is strictly above both neighbours' (first and last cuts are never
  peaks); its convergence is the percentage change from the peak to the minimum of the next
  ``window`` (10) cuts, (min − peak) / peak × 100 (percent, −100..0: a peak is above its next
  cut, so the value is always negative); the story value is the mean over its peaks, more
  negative = tension released more sharply. NaN with no peak;
- ``inflection_rate_<α>``: the curve is smoothed by a centred moving average over 3 cuts (2 at
  either end), rescaled to the unit square (pct and smoothed no-rate each min-max scaled; a flat
  axis maps to 0), and a cut is a *reversal* where the smoothed curve changes direction
  (:func:`reversals`: up then down, or down then up, across any flat stretch between them; a
  flat stretch is one reversal, placed at its middle); the rate is the share of the story's cuts
  that are a reversal whose vertex angle (between the segments to the points before and after
  it, in degrees; 180 = straight) is at most α.

Curve statistics need at least ``min_cuts`` (3) cuts; a story with fewer gets NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.settings import settings_from


@dataclass(frozen=True)
class CurveSettings:
    """Story statistics' settings (see the module docstring): the config's ``tension.curves``
    (defaults and ranges in the config schema); built with :meth:`from_config`."""

    late_pct: float
    window: int
    smoothing: int
    angles: tuple[float, ...]
    min_cuts: int

    @classmethod
    def from_config(cls, block: Mapping[str, Any]) -> CurveSettings:
        """From the validated ``tension.curves`` block."""
        return settings_from(cls, block, where="tension.curves")


def cut_no_rates(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per story × cut: n_samples (K), n_judged, n_no, n_unjudged, no_rate (the paper's: 1 −
    matches / K, an ending without a verdict counted as a miss) and no_rate_judged (misses /
    judged endings; NaN if none judged).

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
    out["no_rate"] = (out["n_no"] + out["n_unjudged"]) / out["n_samples"]
    with np.errstate(invalid="ignore", divide="ignore"):
        out["no_rate_judged"] = np.where(out["n_judged"] > 0, out["n_no"] / out["n_judged"], np.nan)
    return tables.TENSION_CURVES.frame(out.sort_values(["story_id", "cut"], kind="stable"))


def moving_average(values: Sequence[float] | np.ndarray, width: int = 3) -> np.ndarray:
    """Centred moving average over ``width`` points (fewer at the ends: what is there)."""
    series = pd.Series(np.asarray(values, dtype=float))
    return series.rolling(width, center=True, min_periods=1).mean().to_numpy()


#: Two smoothed no-rates closer than this are equal (a flat step): the moving average of shares
#: on a 1/K grid carries rounding noise of about 1e-16, which must not count as a direction.
TIE = 1e-9


def unit_square(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """``values`` min-max scaled to [0, 1]; all zeros when they are all equal (within
    :data:`TIE`)."""
    arr = np.asarray(values, dtype=float)
    span = arr.max() - arr.min()
    return np.zeros_like(arr) if span <= TIE else (arr - arr.min()) / span


def vertex_angle(before: Sequence[float], vertex: Sequence[float], after: Sequence[float]) -> float:
    """Angle at ``vertex`` between the segments to ``before`` and ``after`` (degrees, 0-180)."""
    a = np.asarray(before, float) - np.asarray(vertex, float)
    b = np.asarray(after, float) - np.asarray(vertex, float)
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    return math.degrees(math.acos(max(-1.0, min(1.0, cos))))


def flat_runs(values: Sequence[float] | np.ndarray) -> list[tuple[int, int]]:
    """``(first, last)`` position of each run of equal neighbouring values (within
    :data:`TIE`), in order; a value unlike its neighbours is a run of one."""
    y = np.asarray(values, dtype=float)
    runs, first = [], 0
    for j in range(1, len(y)):
        if abs(y[j] - y[j - 1]) > TIE:
            runs.append((first, j - 1))
            first = j
    if len(y):
        runs.append((first, len(y) - 1))
    return runs


def reversals(
    pct: Sequence[float] | np.ndarray, no_rate: Sequence[float] | np.ndarray, smoothing: int
) -> list[tuple[int, int, float]]:
    """The reversals of the smoothed, rescaled curve: ``(first, last, angle)``.

    The curve is smoothed (:func:`moving_average`) and rescaled (:func:`unit_square`); equal
    neighbouring values (within :data:`TIE`) form a flat run (:func:`flat_runs`). A run that
    has a run on either side is a reversal when the curve rises into it and falls out of it, or
    the reverse: a strict peak or trough is a run of one cut (``first == last``), a flat top or
    bottom (several cuts at the same smoothed no-rate, common at small K) is one reversal whose
    vertex is the middle of the run. ``angle``: the vertex angle (degrees) between the segments
    from the vertex to the cut before the run and the cut after it. A flat step on the way up or
    down (rise, flat, rise) is no reversal.
    """
    smooth = moving_average(no_rate, smoothing)
    x, y = unit_square(pct), unit_square(smooth)
    runs = flat_runs(smooth)
    found = []
    for first, last in runs[1:-1]:
        rise_in = smooth[first] > smooth[first - 1]
        rise_out = smooth[last + 1] > smooth[last]
        if rise_in != rise_out:
            vertex = ((x[first] + x[last]) / 2, y[first])
            angle = vertex_angle((x[first - 1], y[first - 1]), vertex, (x[last + 1], y[last + 1]))
            found.append((first, last, angle))
    return found


def post_spike_convergence(no_rate: Sequence[float] | np.ndarray, window: int = 10) -> list[float]:
    """For each peak (a cut strictly above both neighbours), the percentage change from its
    no-rate to the minimum of the next ``window`` cuts: (min − peak) / peak × 100 (percent,
    negative: the next cut is below the peak, and a peak is above 0)."""
    y = np.asarray(no_rate, dtype=float)
    return [
        float((y[j + 1 : j + 1 + window].min() - y[j]) / y[j] * 100)
        for j in range(1, len(y) - 1)
        if y[j] > y[j - 1] and y[j] > y[j + 1]
    ]


def curve_statistics(
    pct: Sequence[float], no_rate: Sequence[float], settings: CurveSettings
) -> dict[str, float]:
    """The statistics of one curve (cuts with a no-rate, in story order)."""
    x, y = np.asarray(pct, float), np.asarray(no_rate, float)
    late = y[x >= settings.late_pct]
    stats = {
        "n_cuts": len(y),
        "no_rate": float(y.mean()) if len(y) else math.nan,
        "late_no_rate": float(late.mean()) if len(late) else math.nan,
    }
    enough = len(y) >= settings.min_cuts
    changes = post_spike_convergence(y, settings.window) if enough else []
    stats["post_spike_convergence"] = float(np.mean(changes)) if changes else math.nan
    turns = reversals(x, y, settings.smoothing) if enough else []
    for alpha in settings.angles:
        stats[angle_column(alpha)] = (
            sum(angle <= alpha for *_, angle in turns) / len(y) if enough else math.nan
        )
    return stats


def angle_column(alpha: float) -> str:
    """Column name of the inflection rate at threshold ``alpha`` degrees."""
    return f"inflection_rate_{alpha:g}"


def story_statistics(curves: pd.DataFrame, settings: CurveSettings) -> pd.DataFrame:
    """One row per story × model × judge: n_cuts, n_unjudged, no_rate, no_rate_judged,
    late_no_rate, post_spike_convergence and the inflection rates
    (:data:`tables.TENSION_STORIES`, plus one column per angle). Every statistic but
    ``no_rate_judged`` is of the paper's no-rate curve."""
    rows = []
    keys = ["story_id", "story_type", "model", "judge"]
    for key, grp in curves.groupby(keys, sort=False):
        kept = grp.sort_values("cut").dropna(subset=["no_rate"])
        stats = curve_statistics(kept["pct"], kept["no_rate"], settings)
        judged_only = grp["no_rate_judged"].dropna()
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                **stats,
                "n_unjudged": int(grp["n_unjudged"].sum()),
                "no_rate_judged": float(judged_only.mean()) if len(judged_only) else math.nan,
            }
        )
    angles = [angle_column(a) for a in settings.angles]
    frame = tables.TENSION_STORIES.partial(rows, extra=angles)
    return tables.TENSION_STORIES.frame(frame)
