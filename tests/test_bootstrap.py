"""storyflow.bootstrap: the one percentile bootstrap every interval is drawn with."""

from __future__ import annotations

import math

import numpy as np

from storyflow import bootstrap

SETTINGS = {"confidence": 0.95, "resamples": 1000, "seed": 3}


def test_a_share_of_four_stories_keeps_its_interval_inside_zero_and_one() -> None:
    low, high = bootstrap.mean_interval([1.0, 1.0, 1.0, 0.0], **SETTINGS)
    assert 0.0 <= low < 0.75 < high == 1.0
    # a t interval of the same share: 0.75 ± 3.18 × 0.5 / 2 leaves [0, 1]
    assert 0.75 + 3.182 * 0.5 / 2 > 1
    # the same seed, the same interval; another seed, the draws differ
    assert bootstrap.mean_interval([1.0, 1.0, 1.0, 0.0], **SETTINGS) == (low, high)
    other = bootstrap.mean_interval(np.arange(20.0), **{**SETTINGS, "seed": 4})
    assert other != bootstrap.mean_interval(np.arange(20.0), **SETTINGS)


def test_paired_samples_are_resampled_together() -> None:
    """x and y of one story stay together: a correlation of y = x is 1 in every resample."""
    x = np.arange(12.0)

    def correlation(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        a = a - a.mean(axis=axis, keepdims=True)
        b = b - b.mean(axis=axis, keepdims=True)
        return (a * b).sum(axis=axis) / np.sqrt((a * a).sum(axis=axis) * (b * b).sum(axis=axis))

    paired = bootstrap.interval((x, x), correlation, paired=True, **SETTINGS)
    assert paired == (1.0, 1.0)
    unpaired = bootstrap.interval((x, x), correlation, paired=False, **SETTINGS)
    assert unpaired[0] < 0.5


def test_undefined_resamples_are_left_out_and_too_many_give_no_interval() -> None:
    """A resampled share of a class that is absent is NaN: a few such resamples are dropped, a
    majority leaves the interval NaN, as does too little data."""

    def share_of_ones(items: list[tuple[int, int]]) -> float:
        """The share won among the items labelled 1, defined from three such items on."""
        ones = [won for won, label in items if label == 1]
        return float(np.mean(ones)) if len(ones) >= 3 else math.nan

    # 2 of 20 labelled 1: a resample holds 3 or more in about a third of the draws
    rare = [(1, 1), (0, 1)] + [(0, 0)] * 18
    assert all(math.isnan(v) for v in bootstrap.units_interval(rare, share_of_ones, **SETTINGS))
    balanced = [(1, 1), (0, 1)] * 10 + [(0, 0)] * 4
    low, high = bootstrap.units_interval(balanced, share_of_ones, **SETTINGS)
    assert 0.0 <= low < 0.5 < high <= 1.0
    assert all(math.isnan(v) for v in bootstrap.mean_interval([0.4], **SETTINGS))
    assert all(
        math.isnan(v) for v in bootstrap.mean_interval([1.0, 2.0], **{**SETTINGS, "resamples": 0})
    )


def test_an_unpaired_difference_resamples_each_group_on_its_own() -> None:
    a, b = np.full(10, 2.0), np.full(6, 1.0)

    def difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return x.mean(axis=axis) - y.mean(axis=axis)

    assert bootstrap.interval((a, b), difference, **SETTINGS) == (1.0, 1.0)
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1.0, 40), rng.normal(0.0, 1.0, 25)
    low, high = bootstrap.interval((a, b), difference, **SETTINGS)
    assert low < a.mean() - b.mean() < high and high - low < 1.5
