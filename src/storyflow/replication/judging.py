"""Does our figure agree with the published one? One row's verdict, and the summary for the
report's first page.

The verdict rule (docs/replication.md, "Verdicts") reads every claim from an interval, never from
the sign of our point estimate:

- what the paper claims (:func:`claim_of`), as the published file's ``direction`` gives it from
  the sentence of the paper that reads the row (``decided_by``): an **effect** in a direction,
  **no effect** (``0``), an **order** of two groups, a coefficient **significant** at a level,
  **none significant** above a p-value; a printed number that no sentence reads is a **value**
  (a share, a rate, a score, or a g), told apart from the other values of its table's column
  (``competitors``);
- our counterpart (:class:`Ours`): the same quantity with its percentile bootstrap interval (for
  an order, the difference of the claimed order's two sides: positive when it holds; for a
  p-value claim, the BH-adjusted p);
- the verdict (:func:`judge`): ``agrees``, ``disagrees`` or ``inconclusive`` from where the
  interval lies against 0, the band and the published value, and ``not judged`` when ours was not
  computed, rests on a model that failed its validity check, has no interval, or is not the
  paper's quantity.

Whether our interval covers the published value (``ci_covers``) is reported beside the verdict,
as a separate statement about size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from storyflow import tables
from storyflow.replication import context, decide, intervals
from storyflow.replication.intervals import INCONCLUSIVE as INCONCLUSIVE
from storyflow.replication.published import competitor_ids
from storyflow.replication.words import number

#: The verdicts, in the order the summaries count them.
AGREES, DISAGREES, NOT_JUDGED = "agrees", "disagrees", "not judged"
VERDICTS = (AGREES, DISAGREES, INCONCLUSIVE, NOT_JUDGED)
#: The answers of ``ci_covers``.
YES, NO, NA = "yes", "no", "n/a"
#: How a failed validity verdict starts (``Ours.validity``: 'valid', 'failed: ...', 'not checked').
FAILED = "failed"
#: What a published row claims (:func:`claim_of`).
EFFECT, NO_EFFECT, ORDER = "effect", "no effect", "order"
SIGNIFICANT, NONE_SIGNIFICANT, VALUE = "significant", "none significant", "value"
#: The reason's words for a claimed effect in g whose interval lies wholly below the claimed
#: value less the band (:func:`smaller_limit`).
SMALLER_THAN_CLAIMED = "smaller than claimed"
#: How ``to_decide`` starts when the sample that would decide a row exceeds what its corpus holds.
NOT_DECIDABLE_HERE = "not decidable in this corpus"
#: Quantities whose published value near 0 is read as a claim of no effect (the band's unit).
BANDED_QUANTITIES = frozenset({"hedges_g"})


@dataclass(frozen=True)
class Ours:
    """Our counterpart of one published figure.

    value: the same quantity computed from this run (NaN when not computed), in the published
    figure's unit; for an order claim the difference of its two sides (positive: the claimed
    order holds); for a p-value claim our BH-adjusted p; ci: its confidence interval (NaN, NaN
    when none); direction: '+', '-' or the order found in words ('' to take the sign of
    ``value`` when ``signed``); n: what it rests on, in words; models: our models it rests on;
    validity: the verdict of their validity checks ('valid', 'failed: ...', 'not checked');
    note: why it was not computed, or how it differs from the paper's setting; signed: whether
    the sign of the value is a direction (g, a difference) or not (a share, a rate);
    incomparable: why ours, although computed, is not the paper's quantity (then it is not
    judged; '' when it is); units: the resampled units (stories, books, prompts) of our
    smaller group (NaN: not counted); unit: what one of them is ('stories', 'books',
    'prompts', 'story versions'); unit_tokens: (model, NLL tokens one unit costs with it)
    for each of the row's models (empty: not an NLL measure, or no cost table);
    original_units: the original study's units per group (NaN, NaN: not known), for the
    small-telescopes reading; available: the units the corpus holds in that smaller group
    (NaN: not known to the run), the most any sample of it can reach.
    """

    value: float
    ci: tuple[float, float]
    direction: str
    n: str
    models: str
    validity: str
    note: str
    signed: bool
    incomparable: str = ""
    units: float = math.nan
    unit: str = "stories"
    unit_tokens: tuple[tuple[str, float], ...] = ()
    original_units: tuple[float, float] = (math.nan, math.nan)
    available: float = math.nan

    @classmethod
    def missing(cls, note: str, *, models: str = "", validity: str = "") -> Ours:
        """A figure this run does not give, and why."""
        return cls(math.nan, (math.nan, math.nan), "", "", models, validity, note, False)

    @property
    def failed(self) -> bool:
        """Whether it rests on a model or group that failed its validity check (``validity``
        'failed: ...'): then it is not judged."""
        return self.validity.startswith(FAILED)

    @property
    def computed(self) -> bool:
        """Whether this run gives a value or a direction."""
        return math.isfinite(self.value) or bool(self.direction)


def result_table(
    table: tables.Table, files: Mapping[str, Sequence[str]], key: str
) -> pd.DataFrame | None:
    """The run's result table given as ``files[key]`` (read and checked as ``table``), or None
    when the run does not make it (the measure behind it is not run)."""
    return tables.read(table, files[key][0]) if key in files else None


@dataclass(frozen=True)
class Rule:
    """The settings of the verdict rule: ``band`` is the equivalence band of Hedges' g (a claim
    of no effect agrees when our interval lies inside -band..band and disagrees when it lies
    wholly beyond it; a claimed g is smaller than claimed wholly nearer 0 than the claimed g
    less the band); ``alpha`` the level at which a BH-adjusted p is significant (the papers state
    none; ``regression.fdr_alpha``); ``tolerance`` the relative tolerance of a value the paper
    gives no other value to tell from (its interval must lie within ±tolerance × |value| of
    it; ``replication.value_tolerance``); ``power`` the chance at which "to decide" is given
    (``replication.power``) and ``confidence`` the level of our intervals
    (``stats.confidence``)."""

    band: float
    alpha: float
    tolerance: float = 0.1
    power: float = 0.8
    confidence: float = 0.95


@dataclass(frozen=True)
class Claim:
    """What one published row claims: ``kind`` (:data:`EFFECT`, ...), ``sign`` ('+' or '-' of an
    effect or a significant coefficient), ``value`` (the published figure, NaN for none),
    ``threshold`` (the p-value of a none-significant claim), ``banded`` (whether the
    equivalence band applies: Hedges' g), ``precision`` (half a unit in the last digit the
    paper prints of the value: :func:`storyflow.replication.published.half_unit`; NaN: not
    known) and, for a value, ``competitors``: (name, value) of the other values in the same
    column of the paper's table."""

    kind: str
    sign: str = ""
    value: float = math.nan
    threshold: float = math.nan
    banded: bool = False
    competitors: tuple[tuple[str, float], ...] = ()
    precision: float = math.nan


def sign(value: float) -> str:
    """'+', '-' or '0' of a finite value; '' for NaN."""
    if not math.isfinite(value):
        return ""
    return "+" if value > 0 else "-" if value < 0 else "0"


def claim_of(
    published: Mapping[str, object], competitors: Sequence[tuple[str, float]] = ()
) -> Claim:
    """The claim of one published row (:data:`storyflow.tables.PUBLISHED`), as its
    ``direction`` gives it from the sentence of the paper named in ``decided_by``.

    ``p > X`` is a claim that no p falls below X; an order (``a > b``) is an order; ``+``/``-``
    an effect in that direction (a significant one for a ``regression_p`` row); ``0`` no
    effect. A row without a direction is a number the paper prints and no sentence reads: a
    value, told apart from ``competitors`` (name, value), the other values of its column.
    """
    value = float(published["value"])  # type: ignore[arg-type]
    precision = float(published.get("precision", math.nan))  # type: ignore[arg-type]
    direction = str(published["direction"] or "").strip()
    banded = str(published["quantity"]) in BANDED_QUANTITIES
    if direction.startswith("p >"):
        return Claim(NONE_SIGNIFICANT, value=value, threshold=float(direction.split(">")[1]))
    if published["quantity"] == "regression_p":
        return Claim(SIGNIFICANT, sign=direction, value=value)
    if ">" in direction:
        return Claim(ORDER, sign="+", value=value)
    if direction == "0":
        return Claim(NO_EFFECT, value=value, banded=banded)
    if direction in ("+", "-"):
        return Claim(EFFECT, sign=direction, value=value, banded=banded)
    return Claim(
        VALUE, value=value, banded=banded, competitors=tuple(competitors), precision=precision
    )


def _span(low: float, high: float) -> str:
    return f"our interval, {number(low)} to {number(high)},"


def _published(claim: Claim) -> str:
    return f"the published {number(claim.value)}" if math.isfinite(claim.value) else "the paper's"


def smaller_limit(claim: Claim, band: float) -> float:
    """The claimed g less the band, towards 0 (for a '+' claim of 0.58 and a band of 0.2: 0.38):
    an interval wholly on the near side of it rules out an effect as large as claimed (NaN for
    a claim without a published g, or not in g)."""
    if not (claim.banded and math.isfinite(claim.value)):
        return math.nan
    return claim.value - band if claim.sign != "-" else claim.value + band


def _effect(claim: Claim, low: float, high: float, band: float) -> tuple[str, str]:
    """An effect disagrees when our interval lies on the other side of 0, or, for a g, wholly
    nearer 0 than the claimed value less the band (:data:`SMALLER_THAN_CLAIMED`: a test of
    inferiority against the claim, :func:`smaller_limit`); it agrees when it lies on the claimed
    side of 0; it is inconclusive while it holds 0. A claim of a small g (below the band) is
    not contradicted by reproducing it: its limit lies beyond 0."""
    found, limit = intervals.side(low, high), smaller_limit(claim, band)
    side, other = ("above", "below") if claim.sign == "+" else ("below", "above")
    if found and found != claim.sign:
        return DISAGREES, f"{_span(low, high)} lies {other} 0, the opposite of {_published(claim)}"
    if math.isfinite(limit) and (high < limit if claim.sign != "-" else low > limit):
        return DISAGREES, (
            f"{SMALLER_THAN_CLAIMED}: {_span(low, high)} lies {other} {number(limit)}, "
            f"{_published(claim)} less the band ±{number(band)}: an effect as large as claimed is "
            "ruled out"
        )
    if found == claim.sign:
        return AGREES, f"{_span(low, high)} lies {side} 0, as {_published(claim)} does"
    if math.isfinite(claim.value) and low <= claim.value <= high:
        return INCONCLUSIVE, f"{_span(low, high)} holds both 0 and {_published(claim)}"
    return INCONCLUSIVE, f"{_span(low, high)} holds 0"


#: The reason's words of each outcome of a claim of no effect, with Lakens' (2017) reading.
_NO_EFFECT_WORDS = {
    intervals.Outcome.EQUIVALENT: (
        AGREES,
        "lies inside {band}, as the paper's no effect ({value}): equivalent to 0 and not "
        "different from it",
    ),
    intervals.Outcome.SMALLER: (
        AGREES,
        "lies inside {band} and excludes 0: an effect smaller than the band, as the "
        "paper's no effect ({value}) allows (different from 0 and equivalent)",
    ),
    intervals.Outcome.BEYOND: (
        DISAGREES,
        "lies wholly beyond {band}: an effect where the paper reads {value} as none "
        "(different, not equivalent, and beyond the band)",
    ),
    intervals.Outcome.DIFFERENT: (
        INCONCLUSIVE,
        "excludes 0 but reaches into {band}: not shown equivalent, nor beyond the "
        "band (different, not equivalent)",
    ),
    intervals.Outcome.UNDECIDED: (
        INCONCLUSIVE,
        "holds 0 but reaches beyond {band} (neither different nor equivalent)",
    ),
}


def _no_effect(claim: Claim, low: float, high: float, band: float) -> tuple[str, str]:
    """No effect agrees when our interval lies inside the band (holding 0 or not), disagrees
    only when it lies wholly beyond the band, and is inconclusive otherwise: an equivalence
    test and a minimum-effect test read together (:func:`storyflow.replication.intervals.read`,
    :data:`_NO_EFFECT_WORDS`)."""
    verdict, words = _NO_EFFECT_WORDS[intervals.read(low, high, band)]
    reason = words.format(band=f"±{number(band)}", value=number(claim.value))
    return verdict, f"{_span(low, high)} {reason}"


def _order(low: float, high: float) -> tuple[str, str]:
    span = f"our interval of the difference, {number(low)} to {number(high)},"
    if low > 0:
        return AGREES, f"{span} lies above 0: the same order"
    if high < 0:
        return DISAGREES, f"{span} lies below 0: the opposite order"
    return INCONCLUSIVE, f"{span} holds 0: the order is not resolved"


def _named(values: Sequence[tuple[str, float]]) -> str:
    return ", ".join(f"{name} {number(v)}" for name, v in values)


@dataclass(frozen=True)
class Margin:
    """Where a value claim's interval must lie to agree: ``low`` to ``high`` around the
    published value (``words`` says how each side was set, :func:`value_margin`); ``ties``
    names the competing values equal to the published one (the paper's own statement that they
    cannot be told apart)."""

    low: float
    high: float
    words: tuple[str, str]
    ties: str = ""


def value_margin(claim: Claim, rule: Rule) -> Margin:
    """The margin of a value claim on each side of the published value ``v``, in its unit:

    - the full margin ``m``: the equivalence band for a Hedges' g, else ``rule.tolerance`` of
      ``|v|`` but never less than the figure's printed precision (half a unit of its last
      digit: so a published 0.00 has ±0.005, a width a sample can reach);
    - on a side where another value of the column lies at distance ``d < 2m``, narrowed to
      ``d/2`` (half way: where our interval stops being nearer the published value than the
      competitor), but never below ``m/2``, nor below the printed precision. The narrowing is
      continuous in ``d``: a tie (``d = 0``) and a neighbour 0.001 away both give ``m/2``, and
      a competitor nearer than ``m`` lies inside the margin: at this tolerance the two are not
      told apart.
    """
    v = claim.value
    precision = claim.precision if math.isfinite(claim.precision) else 0.0
    if claim.banded:
        margin, unit = rule.band, number(rule.band)
    elif rule.tolerance * abs(v) >= precision:
        margin, unit = rule.tolerance * abs(v), f"{rule.tolerance:.0%}"
    else:
        margin, unit = precision, f"{number(precision)}, half a unit of its last printed digit"
    ties = [c for c in claim.competitors if c[1] == v]
    bounds, words = [], []
    for side in (-1.0, 1.0):
        here = [c for c in claim.competitors if (c[1] - v) * side >= 0]
        nearest = min(here, key=lambda c: abs(c[1] - v)) if here else None
        half = abs(nearest[1] - v) / 2 if nearest is not None else math.inf
        width = max(min(margin, max(half, margin / 2)), precision)
        if width == margin or nearest is None:
            why = f"the published value {'-' if side < 0 else '+'} {unit}"
        elif half > margin / 2:
            why = f"half way to {_named([nearest])}"
        elif width == margin / 2:
            why = f"half the margin, as {_named([nearest])} lies nearer than the whole"
        else:
            why = f"half a unit of the printed value's last digit, as {_named([nearest])} is nearer"
        bounds.append(v + side * width)
        words.append(f"{number(v + side * width)} ({why})")
    return Margin(bounds[0], bounds[1], (words[0], words[1]), _named(ties))


def _value(claim: Claim, low: float, high: float, value: float, rule: Rule) -> tuple[str, str]:
    """An equivalence reading of a value: it agrees when our interval lies within the value's
    margin (:func:`value_margin`), disagrees when it excludes the whole margin, and is
    inconclusive otherwise; a competitor tied with the value is named, never required apart."""
    margin = value_margin(claim, rule)
    tie = f"; the paper ties it with {margin.ties}" if margin.ties else ""
    held = [(name, v) for name, v in claim.competitors if low <= v <= high and v != claim.value]
    also = f"; it holds {_named(held)}" if held else ""
    between = f"{margin.words[0]} to {margin.words[1]}"
    if high < margin.low or low > margin.high:
        return DISAGREES, (
            f"{_span(low, high)} lies {'above' if low > margin.high else 'below'} the published "
            f"value's margin, {between}{also}{tie}"
        )
    if margin.low <= low and high <= margin.high:
        return (
            AGREES,
            f"{_span(low, high)} lies within the published value's margin, {between}{tie}",
        )
    return INCONCLUSIVE, (
        f"{_span(low, high)} reaches beyond the published value's margin, {between}, without "
        f"excluding it{also}{tie}"
    )


def _significant(claim: Claim, ours: Ours, alpha: float) -> tuple[str, str]:
    p, found = ours.value, ours.direction
    words = {"+": "positive", "-": "negative"}
    test = f"p_fdr = {number(p)}"
    if p >= alpha:
        return INCONCLUSIVE, (
            f"{test}, not significant at {number(alpha)} (the paper: p = {number(claim.value)}, "
            f"{words.get(claim.sign, claim.sign)})"
        )
    if found == claim.sign:
        return AGREES, f"{test} < {number(alpha)}, {words.get(found, found)} as published"
    return DISAGREES, (
        f"{test} < {number(alpha)} but {words.get(found, found)}: the opposite sign of the paper's"
    )


def _none_significant(claim: Claim, ours: Ours, alpha: float) -> tuple[str, str]:
    p, where = ours.value, ours.direction
    if p > claim.threshold:
        return AGREES, f"every p_fdr is above {number(claim.threshold)}, as published"
    if p < alpha:
        return DISAGREES, (
            f"{where} is below {number(alpha)}: an association the paper excludes "
            f"(all p > {number(claim.threshold)})"
        )
    return INCONCLUSIVE, (
        f"the smallest p_fdr, {number(p)}, lies between {number(alpha)} and "
        f"{number(claim.threshold)}"
    )


def judge(claim: Claim, ours: Ours, rule: Rule) -> tuple[str, str]:
    """The verdict of ``ours`` on ``claim`` (one of :data:`VERDICTS`) and its reason in words
    (the report writes "<verdict>: <reason>")."""
    if not ours.computed:
        return NOT_JUDGED, f"not computed ({ours.note})"
    if ours.failed:
        return NOT_JUDGED, f"rests on a model or group that failed its check ({ours.validity})"
    if ours.incomparable:
        return NOT_JUDGED, f"not the paper's quantity ({ours.incomparable})"
    if claim.kind == SIGNIFICANT and math.isfinite(ours.value):
        return _significant(claim, ours, rule.alpha)
    if claim.kind == NONE_SIGNIFICANT and math.isfinite(ours.value):
        return _none_significant(claim, ours, rule.alpha)
    low, high = ours.ci
    if not (math.isfinite(low) and math.isfinite(high)):
        return NOT_JUDGED, "ours has no interval"
    if claim.kind == EFFECT:
        return _effect(claim, low, high, rule.band)
    if claim.kind == NO_EFFECT:
        return _no_effect(claim, low, high, rule.band)
    if claim.kind == ORDER:
        return _order(low, high)
    if claim.kind == VALUE and math.isfinite(claim.value):
        return _value(claim, low, high, ours.value, rule)
    return NOT_JUDGED, f"no rule judges a {claim.kind} claim without a published value"


def covers(published: float, ours: Ours) -> str:
    """``ci_covers``: whether our interval holds the published value (n/a without both)."""
    low, high = ours.ci
    if not all(math.isfinite(x) for x in (published, low, high)):
        return NA
    return YES if low <= published <= high else NO


def deciding(claim: Claim, rule: Rule, estimate: float) -> list[intervals.Target]:
    """The ways an inconclusive row of ``claim`` can decide, each with what it would mean at
    our ``estimate`` (:class:`storyflow.replication.intervals.Target`; [] for a p-value claim:
    storyflow scales intervals, not p-values)."""
    band, span = f"±{number(rule.band)}", (-rule.band, rule.band)
    if claim.kind == NO_EFFECT:
        return [
            intervals.Target(f"our interval inside {band} (agrees)", inside=span),
            intervals.Target(f"our interval wholly beyond {band} (disagrees)", outside=span),
        ]
    if claim.kind in (EFFECT, ORDER):
        claimed = sign(estimate) == (claim.sign or "+")
        on = "the claimed side (agrees)" if claimed else "the other side (disagrees)"
        targets = [intervals.Target(f"our interval excludes 0, on {on}", line=0.0)]
        limit = smaller_limit(claim, rule.band)
        if math.isfinite(limit):
            near = (limit, math.inf) if claim.sign != "-" else (-math.inf, limit)
            words = f"our interval wholly nearer 0 than {number(limit)} ({SMALLER_THAN_CLAIMED})"
            targets.append(intervals.Target(words, outside=near))
        return targets
    if claim.kind == VALUE and math.isfinite(claim.value):
        margin = value_margin(claim, rule)
        between = f"{margin.words[0]} to {margin.words[1]}"
        edges = (margin.low, margin.high)
        return [
            intervals.Target(f"our interval within the margin, {between} (agrees)", inside=edges),
            intervals.Target(
                f"our interval beyond the margin, {between} (disagrees)", outside=edges
            ),
        ]
    return []


def _telescope(claim: Claim, ours: Ours) -> dict[str, object]:
    """The small-telescopes columns of a claimed effect in Hedges' g whose original sample
    size is known ({} otherwise)."""
    low, high = ours.ci
    known = (*ours.original_units, ours.value, low, high)
    if claim.kind != EFFECT or not claim.banded or not all(math.isfinite(x) for x in known):
        return {}
    d_33 = decide.d33(*ours.original_units)
    reading = decide.telescope(claim.sign, ours.value, low, high, d_33)
    return {
        "d33": reading.d33,
        "small_telescopes": reading.reading,
        "excludes_d33": reading.excludes,
        "n_to_exclude_d33": decide.units_needed(ours.units, reading.factor),
    }


def decision(
    claim: Claim, ours: Ours, verdict: str, rule: Rule, rates: decide.Rates | None
) -> decide.Decision:
    """What it would take to decide the row (an inconclusive one: units per group at
    ``rule.power`` and our estimate, in words, their range over the true values our interval
    holds, and the NLL cost at each model's rate; "not decidable in this corpus" past the units
    it holds), and the small-telescopes reading of a judged effect claim."""
    if verdict not in (AGREES, DISAGREES, INCONCLUSIVE):
        return decide.Decision()
    telescope = _telescope(claim, ours)
    if verdict != INCONCLUSIVE:
        return decide.Decision(**telescope)  # type: ignore[arg-type]
    targets = deciding(claim, rule, ours.value)
    low, high = ours.ci
    if targets:
        n, words, least, most = intervals.units_to_decide(
            ours.value, low, high, targets, ours.units, rule.power, rule.confidence
        )
    else:
        words = "a p-value claim: storyflow scales intervals, not p-values"
        n, least = math.nan, math.nan
        most = decide.units_needed(ours.units, math.inf, unbounded=math.inf)
    beyond = math.isfinite(ours.available) and math.isfinite(n) and n > ours.available
    if beyond:
        words = (
            f"{NOT_DECIDABLE_HERE} ({ours.available:,.0f} {ours.unit} available; {words}, "
            f"needs {n:,.0f} per group)"
        )
    found = decide.cost(n, dict(ours.unit_tokens), rates)
    return decide.Decision(
        n, words, tokens=found.tokens, hours_cpu=found.hours_cpu, hours_gpu=found.hours_gpu,
        n_to_decide_min=least, n_to_decide_max=most,
        rates=found.rates, beyond_corpus=beyond, **telescope,  # type: ignore[arg-type]
    )  # fmt: skip


def row(
    paper: str,
    published: Mapping[str, object],
    ours: Ours,
    claim: Claim,
    rule: Rule,
    rates: decide.Rates | None = None,
) -> dict[str, object]:
    """One :data:`storyflow.tables.REPLICATION` row (without the columns that read the other
    rows: :func:`table` adds them)."""
    verdict, reason = judge(claim, ours, rule)
    found = decision(claim, ours, verdict, rule, rates)
    return {
        "paper": paper,
        "id": published["id"],
        "source": published["source"],
        "claim": published["claim"],
        "corpus": published["corpus"],
        "quantity": published["quantity"],
        "setting": published["setting"],
        "group": published["group"],
        "paper_model": published["model"],
        "published": published["value"],
        "published_direction": published["direction"],
        "claim_type": claim.kind,
        "ours": ours.value,
        "ci_low": ours.ci[0],
        "ci_high": ours.ci[1],
        "ours_direction": ours.direction
        or (sign(ours.value) if ours.signed and math.isfinite(ours.value) else ""),
        "n": ours.n,
        "models": ours.models,
        "validity": ours.validity,
        "failed": ours.failed,
        "verdict": verdict,
        "reason": reason,
        "ci_covers": covers(float(published["value"]), ours),  # type: ignore[arg-type]
        "units": ours.units,
        "unit": ours.unit,
        "n_to_decide": found.n_to_decide,
        "to_decide": found.to_decide,
        "d33": found.d33,
        "small_telescopes": found.small_telescopes,
        "excludes_d33": found.excludes_d33,
        "n_to_exclude_d33": found.n_to_exclude_d33,
        "decide_tokens": found.tokens,
        "decide_hours_cpu": found.hours_cpu,
        "decide_hours_gpu": found.hours_gpu,
        "n_to_decide_min": found.n_to_decide_min,
        "n_to_decide_max": found.n_to_decide_max,
        "available": ours.available,
        "beyond_corpus": found.beyond_corpus,
        "decide_rates": found.rates,
        "note": ours.note,
    }


def table(
    paper: str,
    published: pd.DataFrame,
    ours: Mapping[str, Ours],
    rule: Rule,
    rates: decide.Rates | None = None,
) -> pd.DataFrame:
    """The replication table of ``paper``: every published row beside ours (``ours`` by id; a
    row without one is reported as not computed), each value row told apart from its
    competitors, each mean row beside the paper's per-model values, and the rows that re-use
    one estimate marked as one finding."""
    by_id = published.set_index("id", drop=False)
    rows = []
    for p in published.to_dict("records"):
        competitors = [
            (context.label(p, by_id.loc[c]), float(by_id.at[c, "value"]))
            for c in competitor_ids(str(p["competitors"]))
        ]
        mine = ours.get(str(p["id"]), Ours.missing("no counterpart in storyflow"))
        rows.append(row(paper, p, mine, claim_of(p, competitors), rule, rates))
    frame = pd.DataFrame(rows)
    frame = context.with_paper_models(frame, published)
    frame["same_estimate_as"] = context.same_estimate_as(frame)
    return tables.REPLICATION.frame(frame.to_dict("records"))


def computed(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a replication table this run computed: ours has a value or a direction
    (a row without either says in ``note`` why not)."""
    return frame["ours"].notna() | frame["ours_direction"].fillna("").ne("")


def judged(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a replication table carry a verdict (agrees, disagrees, inconclusive)."""
    return frame["verdict"].isin([AGREES, DISAGREES, INCONCLUSIVE])
