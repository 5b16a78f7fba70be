"""One reading of an interval (storyflow.replication.intervals): the outcome against 0 and the
band that the verdicts and the contrast answers both word, what would decide it, and its range
over the interval, computed exactly; and the typed columns the first page counts."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from storyflow.contrast_answers import answers
from storyflow.replication import decide, intervals, judging, summary
from storyflow.replication.intervals import Outcome, Target

BAND = 0.2


@pytest.mark.parametrize(
    ("low", "high", "outcome"),
    [
        (-0.1, 0.15, Outcome.EQUIVALENT),  # Lakens' A: equivalent, not different from 0
        (0.05, 0.15, Outcome.SMALLER),  # B: different from 0 and equivalent
        (0.05, 0.50, Outcome.DIFFERENT),  # C: different, not shown equivalent
        (0.25, 0.60, Outcome.BEYOND),  # C, wholly beyond the band
        (-0.60, -0.21, Outcome.BEYOND),
        (-0.1, 0.5, Outcome.UNDECIDED),  # D: neither
        (-0.2, 0.1, Outcome.UNDECIDED),  # an end on the band is not inside it
    ],
)
def test_an_interval_has_one_of_lakens_outcomes(low: float, high: float, outcome) -> None:
    assert intervals.read(low, high, BAND) is outcome


def test_the_verdicts_and_the_answers_word_the_same_outcome() -> None:
    """No effect agrees exactly where an answer says no difference or smaller than the band, and
    disagrees only beyond the band; the answers' difference is an interval excluding 0 (Lakens'
    "different"); a claimed g of 0.5 is smaller than claimed below 0.3, inside the band or not."""
    claim_none = judging.Claim(judging.NO_EFFECT, value=0.0, banded=True)
    claim_up = judging.Claim(judging.EFFECT, sign="+", value=0.5, banded=True)
    shapes = [(-0.1, 0.15), (0.05, 0.15), (0.05, 0.5), (0.25, 0.6), (-0.1, 0.5), (0.21, 0.29)]
    for low, high in shapes:
        outcome = intervals.read(low, high, BAND)
        answer = answers.read_interval(low, high, BAND)[0]
        none = judging._no_effect(claim_none, low, high, BAND)[0]
        up = judging._effect(claim_up, low, high, BAND)[0]
        inside = outcome in (Outcome.EQUIVALENT, Outcome.SMALLER)
        assert (
            (none == judging.AGREES)
            == inside
            == (answer in (answers.NO_DIFFERENCE, answers.SMALLER))
        )
        assert (none == judging.DISAGREES) == (outcome is Outcome.BEYOND)
        assert (up == judging.DISAGREES) == (high < 0.5 - BAND)
        assert (answer == answers.DIFFERENCE) == (outcome in (Outcome.DIFFERENT, Outcome.BEYOND))
        assert (answer == answers.INCONCLUSIVE) == (outcome is Outcome.UNDECIDED)


def test_a_power_factor_scales_the_expected_interval_to_a_stated_power() -> None:
    """At 50% power the expected interval is the answer; at 80% and 95% confidence,
    ((1.96 + 0.8416) / 1.96)^2; checked against statsmodels' normal power at one line."""
    from statsmodels.stats.power import NormalIndPower

    assert intervals.power_factor(0.5, 0.95) == pytest.approx(1.0)
    expected = ((1.959964 + 0.841621) / 1.959964) ** 2
    assert intervals.power_factor(0.8, 0.95) == pytest.approx(expected)
    # one side of a 90% interval clears a line as a one-sided test at 0.05 does: statsmodels'
    # sample sizes at 80% and at 50% power stand in the same ratio
    power = NormalIndPower()
    n50 = power.solve_power(effect_size=0.3, alpha=0.05, power=0.5, alternative="larger")
    n80 = power.solve_power(effect_size=0.3, alpha=0.05, power=0.8, alternative="larger")
    z = ((1.644854 + 0.841621) / 1.644854) ** 2
    assert n80 / n50 == pytest.approx(z, rel=1e-6)
    assert intervals.power_factor(0.8, 0.90) == pytest.approx(z, rel=1e-6)


def test_what_would_decide_takes_the_target_needing_fewest_units() -> None:
    targets = answers.deciding(BAND)
    # at 0 the band is the only target reached: half-width 0.4 must shrink to 0.2, 4 times the units
    assert intervals.to_decide(0.0, -0.4, 0.4, targets) == (pytest.approx(4.0), targets[0].words)
    # at 0.3, outside the band, only excluding 0 decides: (0.5 / 0.3)^2
    factor, words = intervals.to_decide(0.3, -0.2, 0.8, targets)
    assert factor == pytest.approx((0.5 / 0.3) ** 2) and words == targets[1].words
    # a value on the edge of a margin is decided by no sample
    margin = [Target("in", inside=(0.1, 0.3)), Target("out", outside=(0.1, 0.3))]
    assert intervals.to_decide(0.1, 0.0, 0.2, margin) == (math.inf, intervals.UNDECIDABLE)


def _grid_range(targets, estimate, low, high, points):
    below, above = estimate - low, high - estimate
    values = [low + (high - low) * i / (points - 1) for i in range(points)]
    found = [intervals.to_decide(v, v - below, v + above, targets)[0] for v in values]
    return min(found), max(found)


@pytest.mark.parametrize(
    ("estimate", "low", "high"), [(0.1, -0.1, 0.35), (0.15, -0.05, 0.3), (0.05, -0.3, 0.4)]
)
def test_the_range_over_the_interval_is_exact(estimate: float, low: float, high: float) -> None:
    """The most units lie where the band's and 0's factors cross, between grid points: the
    exact range is never below a fine grid's and meets it as the grid grows."""
    targets = answers.deciding(BAND)
    least, most = intervals.factor_range(estimate, low, high, targets)
    coarse, fine = (_grid_range(targets, estimate, low, high, n) for n in (201, 20001))
    assert least == pytest.approx(fine[0], rel=1e-6)
    assert most >= fine[1] >= coarse[1]
    assert most == pytest.approx(fine[1], rel=1e-3)


def test_a_range_holding_an_undecidable_value_is_unbounded() -> None:
    """A value claim's margin edge inside the interval: some true value is decided by no sample."""
    margin = [Target("in", inside=(0.1, 0.3)), Target("out", outside=(0.1, 0.3))]
    assert intervals.factor_range(0.2, 0.05, 0.35, margin)[1] == math.inf


def test_an_interval_on_the_other_side_of_0_counts_as_excluding_d33() -> None:
    """The A9 shape: a claimed positive effect whose interval lies wholly below 0. Its reading
    names no "excludes", yet it rules d33 out: the typed column says so and the first page
    counts it."""
    reading = decide.telescope("+", -0.3, -0.5, -0.1, 0.4)
    assert "excludes" not in reading.reading and reading.excludes
    assert decide.telescope("+", 0.3, 0.1, 0.35, 0.4).excludes
    assert not decide.telescope("+", 0.3, 0.1, 0.5, 0.4).excludes
    row = {
        "id": "A9", "verdict": judging.INCONCLUSIVE, "n_to_decide": 10.0, "unit": "prompts",
        "d33": 0.4, "excludes_d33": True, "decide_tokens": math.nan, "decide_hours_cpu": math.nan,
        "decide_hours_gpu": math.nan, "same_estimate_as": "", "beyond_corpus": False,
        "available": math.nan,
    }  # fmt: skip
    frame = pd.DataFrame([row, {**row, "id": "A10", "excludes_d33": False}])
    found = summary.undecided(frame)
    assert found is not None and found.telescopes == (1, 2) and found.units == "prompts"
