"""Reading an interval: the one classification of a confidence interval against 0 and an
equivalence band (:func:`read`), what sample would decide one not yet decided
(:func:`to_decide`) and the range of that sample over the true values the interval holds
(:func:`factor_range`). The verdicts (:mod:`storyflow.replication.judging`) and the answers
to a study's contrasts (:mod:`storyflow.contrast_answers.answers`) both read intervals here and
word the outcome each in their own terms.

**The classification** reads two tests together (Lakens 2017, *Social Psychological and
Personality Science* 8(4); Lakens, Scheel & Isager 2018): a test of difference (does the
interval exclude 0?) and a test of equivalence (does it lie inside ±band?). Their four outcomes,
the third split by whether the interval also lies wholly beyond the band (a minimum-effect
test):

========== ============================================== =========================================
outcome    the interval                                   Lakens' outcome
========== ============================================== =========================================
EQUIVALENT inside ±band, holding 0                        equivalent, not different from 0
SMALLER    inside ±band, excluding 0                      different from 0 and equivalent
DIFFERENT  excluding 0, reaching into the band            different from 0, not equivalent
BEYOND     wholly beyond ±band                            different, not equivalent: beyond the band
UNDECIDED  holding 0, reaching beyond the band            neither different nor equivalent
========== ============================================== =========================================

**What would decide it** reads the interval as a normal-theory one behaves when the sample
grows: at our estimate, each side's half-width shrinks as 1/sqrt(n) (:mod:`decide`'s
``factor_to_exclude`` and ``factor_inside``). A :class:`Target` is one way the interval can
decide (lie inside a span, or exclude a line); :func:`to_decide` takes the one needing the
fewest units: the sample at which the *expected* interval just decides (about 50% power);
:func:`power_factor` scales it to a stated power.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist

from storyflow.replication import decide


class Outcome(StrEnum):
    """Where an interval lies against 0 and ±band (the module docstring's table)."""

    EQUIVALENT = "equivalent"
    SMALLER = "smaller than the band"
    DIFFERENT = "different"
    BEYOND = "beyond the band"
    UNDECIDED = "undecided"


#: The word of a verdict or an answer whose interval decides nothing yet (the verdicts' and the
#: contrast answers' own word for :attr:`Outcome.UNDECIDED`, and for a row the rule cannot
#: settle another way).
INCONCLUSIVE = "inconclusive"


def read(low: float, high: float, band: float) -> Outcome:
    """The outcome of the interval [``low``, ``high``] against 0 and ±``band`` (strictly inside
    the band: an end on it is not inside)."""
    if -band < low and high < band:
        return Outcome.SMALLER if (low > 0 or high < 0) else Outcome.EQUIVALENT
    if low > band or high < -band:
        return Outcome.BEYOND
    if low > 0 or high < 0:
        return Outcome.DIFFERENT
    return Outcome.UNDECIDED


def side(low: float, high: float, line: float = 0.0) -> str:
    """'+' when the interval lies above ``line``, '-' below it, '' when it holds it."""
    return "+" if low > line else "-" if high < line else ""


@dataclass(frozen=True)
class Target:
    """One way an interval can decide, and what deciding that way would mean (``words``): lie
    inside the span ``inside`` (lower, upper), wholly outside the span ``outside`` (beyond
    whichever end the estimate is past), or exclude ``line`` (on either side)."""

    words: str
    inside: tuple[float, float] | None = None
    outside: tuple[float, float] | None = None
    line: float | None = None

    def factor(self, estimate: float, low: float, high: float) -> float:
        """The multiple of its units at which the interval, at ``estimate`` and its spread,
        reaches this target (inf when it never does at this estimate)."""
        if self.inside is not None:
            return decide.factor_inside(estimate, low, high, *self.inside)
        if self.outside is not None:
            lower, upper = self.outside
            if lower <= estimate <= upper:
                return math.inf
            edge = upper if estimate > upper else lower
            return decide.factor_to_exclude(estimate, low, high, edge)
        assert self.line is not None
        return decide.factor_to_exclude(estimate, low, high, self.line)

    def lines(self) -> tuple[float, ...]:
        """The lines this target's factor is measured from: the true values at which it needs
        infinitely many units (a span's infinite end is none)."""
        span = self.inside or self.outside
        found = span if span is not None else (float(self.line),)  # type: ignore[arg-type]
        return tuple(x for x in found if math.isfinite(x))


def power_factor(power: float, confidence: float) -> float:
    """How many times the units at which the *expected* interval just reaches a line give a
    ``power`` chance that the interval (at level ``confidence``) clears it: under normal theory
    the estimate's standard error is half-width / z, so clearing a line at distance d with
    chance ``power`` needs d = (z + z_power) se, against d = z se for the expected interval:
    ((z + z_power) / z)² (2.04 at 80% power and 95% confidence; 1 at 50%). Exact for one line;
    for a span (both ends to clear) each end is given that chance, so both together have a
    little less."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return ((z + NormalDist().inv_cdf(power)) / z) ** 2


#: What :func:`to_decide` says when no target is reached at the estimate.
UNDECIDABLE = "at this estimate no sample decides it"


def to_decide(
    estimate: float, low: float, high: float, targets: Sequence[Target]
) -> tuple[float, str]:
    """The fewest units (a multiple of the interval's) at which the interval reaches one of
    ``targets``, and that target's words (inf and :data:`UNDECIDABLE` when none is reached)."""
    found = [(t.factor(estimate, low, high), t.words) for t in targets]
    finite = [f for f in found if math.isfinite(f[0])]
    return min(finite, key=lambda f: f[0]) if finite else (math.inf, UNDECIDABLE)


def _crossings(
    targets: Sequence[Target], below: float, above: float, low: float, high: float
) -> list[float]:
    """The true values between ``low`` and ``high`` at which two of the targets' factors can
    cross, or a target's factor turns, and the targets' poles: each factor is a square of
    (half-width / distance to a line), so two of them meet where two such ratios are equal, a
    linear equation in the true value. The least and most of the fewest units lie at these
    points or at the interval's ends."""
    lines = [line for t in targets for line in t.lines()]
    pieces = [(width, line) for line in lines for width in (below, above)]
    points = list(lines)
    for (c1, p1), (c2, p2) in itertools.combinations(pieces, 2):
        if c1 + c2 > 0:
            points.append((c1 * p2 + c2 * p1) / (c1 + c2))
        if c1 != c2:
            points.append((c1 * p2 - c2 * p1) / (c1 - c2))
    return [p for p in points if low <= p <= high]


def units_to_decide(
    estimate: float,
    low: float,
    high: float,
    targets: Sequence[Target],
    units: float,
    power: float,
    confidence: float,
) -> tuple[float, str, float, float]:
    """What would decide an interval resting on ``units`` per group: the units per group at
    which it reaches one of ``targets`` with chance ``power`` (:func:`to_decide` scaled by
    :func:`power_factor`), that target's words (", at P% power" added when a sample decides),
    and the least and most units over the true values the interval holds (:func:`factor_range`;
    inf: some value there is decided by no sample). The verdicts and the contrast answers both
    give their "to decide" here."""
    factor, words = to_decide(estimate, low, high, targets)
    least, most = factor_range(estimate, low, high, targets)
    scale = power_factor(power, confidence)
    n = decide.units_needed(units, factor * scale)
    return (
        n,
        f"{words}, at {power:.0%} power" if math.isfinite(n) else words,
        decide.units_needed(units, least * scale),
        decide.units_needed(units, most * scale, unbounded=math.inf),
    )


def factor_range(
    estimate: float, low: float, high: float, targets: Sequence[Target]
) -> tuple[float, float]:
    """The least and most of :func:`to_decide`'s units over the true values the interval
    holds: the interval moved to centre on each value from ``low`` to ``high``, its half-widths
    kept; computed exactly (at the interval's ends and the values :func:`_crossings` gives, where
    the fewest units change their course). inf for the most when some value there is decided
    by no sample."""
    below, above = estimate - low, high - estimate
    values = [low, high, *_crossings(targets, below, above, low, high)]
    found = [to_decide(v, v - below, v + above, targets)[0] for v in values]
    return min(found), max(found)
