"""One percentile bootstrap for every interval storyflow draws (``scipy.stats.bootstrap``).

Every bootstrap interval of every measure goes through :func:`interval`: the validity checks and
bounded group means (:mod:`storyflow.validity`), the tension contrasts, CEEval, the comparison's
correlations and the replication tables. Its settings are the config's ``stats`` block
(``confidence``, ``resamples``, ``seed``; :mod:`storyflow.plan.statistics`), under those names.

The method is scipy's ``percentile``: an interval of a bounded quantity (a share, a rate, an
entropy) stays inside its range at any n, where a t or BCa interval may not. Two choices scipy
leaves to the caller are made here once:

* **Undefined resamples.** A resample whose statistic is undefined (NaN: a resampled group with
  one class only, a measure that came out constant) is left out of the percentiles; when more
  than half of them are undefined, the interval is NaN rather than one read off a minority.
* **Too little data.** With fewer than ``min_size`` units in a sample (2 by default) or no
  resamples, the interval is NaN.

One interval is not drawn here: the replication's Hedges' g over clusters (a book's passages
resampled together, within each group; :mod:`storyflow.replication.effects`), because
``scipy.stats.bootstrap`` resamples observations, not clusters within groups.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from storyflow.settings import FromParams


@dataclass(frozen=True)
class Resampling:
    """The percentile bootstrap's settings, from the config's ``stats`` block: the
    ``confidence`` level of every interval (0-1), the ``resamples`` drawn and the generator's
    ``seed`` (:func:`interval`). Its methods are this module's intervals drawn with them."""

    confidence: float
    resamples: int
    seed: int

    def interval(
        self, samples: Sequence[Any], statistic: Callable[..., Any], **options: Any
    ) -> tuple[float, float]:
        """:func:`interval` with these settings (``options``: its ``paired``, ``vectorized``,
        ``min_size``)."""
        return interval(
            samples,
            statistic,
            confidence=self.confidence,
            resamples=self.resamples,
            seed=self.seed,
            **options,
        )

    def units_interval(
        self, units: Sequence[Any], statistic: Callable[[list[Any]], float]
    ) -> tuple[float, float]:
        """:func:`units_interval` with these settings."""
        return units_interval(
            units, statistic, confidence=self.confidence, resamples=self.resamples, seed=self.seed
        )

    def mean_ci(self, values: Sequence[float] | np.ndarray) -> tuple[float, float, float]:
        """Mean of ``values`` (NaN values left out) and its interval (:func:`mean_interval`):
        for bounded quantities (shares, no-rates, entropies) whose t interval would leave
        their range at small n. NaN bounds with fewer than 2 values, all NaN with none."""
        x = np.asarray(values, float)
        x = x[~np.isnan(x)]
        if len(x) == 0:
            return math.nan, math.nan, math.nan
        low, high = mean_interval(
            x, confidence=self.confidence, resamples=self.resamples, seed=self.seed
        )
        return float(x.mean()), low, high


@dataclass(frozen=True)
class Statistics(Resampling, FromParams):
    """The config's ``stats`` block as a rule's params hand it over (``plan.statistics``): the
    bootstrap's settings (:class:`Resampling`) and ``min_group_size``, the fewest stories a
    group needs to be tested or compared (a smaller one keeps its mean and interval, and says
    why it is not tested)."""

    WHERE = "stats"

    min_group_size: int


def interval(
    samples: Sequence[Any],
    statistic: Callable[..., Any],
    *,
    confidence: float,
    resamples: int,
    seed: int,
    paired: bool = False,
    vectorized: bool = True,
    min_size: int = 2,
) -> tuple[float, float]:
    """Percentile bootstrap interval ``(low, high)`` of ``statistic`` (module docstring).

    ``samples``: one array per sample (a group), resampled with replacement, each on its own
    unless ``paired`` (then the same rows of each, e.g. x, y and z of one story);
    ``statistic(*samples, axis=-1)`` when ``vectorized``, else ``statistic(*samples)`` per
    resample; ``confidence``: the level (0.95); ``resamples``: how many; ``seed``: the
    generator's seed, so the interval is the same on every run. The bounds are in the
    statistic's unit.
    """
    arrays = tuple(np.asarray(s) for s in samples)
    if resamples < 1 or min(len(a) for a in arrays) < min_size:
        return math.nan, math.nan
    with warnings.catch_warnings():  # undefined and constant resamples: handled below
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = sps.bootstrap(
            arrays,
            statistic,
            paired=paired,
            vectorized=vectorized,
            n_resamples=resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    draws = np.asarray(result.bootstrap_distribution, float).ravel()
    draws = draws[np.isfinite(draws)]
    if draws.size == 0 or draws.size < resamples / 2:
        return math.nan, math.nan
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def units_interval(
    units: Sequence[Any],
    statistic: Callable[[list[Any]], float],
    *,
    confidence: float,
    resamples: int,
    seed: int,
) -> tuple[float, float]:
    """:func:`interval` of ``statistic`` over resamples of ``units``: any objects (a story
    holding all its forecasts, an item with its answers), drawn with replacement, as many as
    there are; ``statistic`` takes a list of them."""
    units = list(units)

    def of_indices(indices: np.ndarray) -> float:
        return statistic([units[int(i)] for i in indices])

    return interval(
        (np.arange(len(units)),),
        of_indices,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        vectorized=False,
    )


def mean_interval(
    values: Sequence[float] | np.ndarray, *, confidence: float, resamples: int, seed: int
) -> tuple[float, float]:
    """:func:`interval` of the mean of ``values`` (NaN values left out first)."""
    x = np.asarray(values, float)
    x = x[~np.isnan(x)]
    return interval(
        (x,), np.mean, confidence=confidence, resamples=resamples, seed=seed, vectorized=True
    )
