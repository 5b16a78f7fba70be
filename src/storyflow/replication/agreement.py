"""Does our figure agree with the published one? One row's verdict, and the summary for the
report's first page.

The verdict rule (docs/replication.md, "Verdicts") reads every claim from an interval, never from
the sign of our point estimate:

- what the paper claims (:func:`claim_of`): an **effect** in a direction, **no effect** (a
  published Hedges' g inside the equivalence band, or a direction of ``0``), an **order** of two
  groups, a coefficient **significant** at a level, **none significant** above a p-value, or a
  **value** (a share, a rate, a score);
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

#: The verdicts, in the order the summaries count them.
AGREES, DISAGREES, INCONCLUSIVE, NOT_JUDGED = "agrees", "disagrees", "inconclusive", "not judged"
VERDICTS = (AGREES, DISAGREES, INCONCLUSIVE, NOT_JUDGED)
#: The answers of ``ci_covers``.
YES, NO, NA = "yes", "no", "n/a"
#: What a published row claims (:func:`claim_of`).
EFFECT, NO_EFFECT, ORDER = "effect", "no effect", "order"
SIGNIFICANT, NONE_SIGNIFICANT, VALUE = "significant", "none significant", "value"
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
    judged; '' when it is).
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

    @classmethod
    def missing(cls, note: str, *, models: str = "", validity: str = "") -> Ours:
        """A figure this run does not give, and why."""
        return cls(math.nan, (math.nan, math.nan), "", "", models, validity, note, False)

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
    of no effect agrees when our interval lies inside -band..band; a claimed effect disagrees
    when it does); ``alpha`` the level at which a BH-adjusted p is significant (the papers state
    none; ``regression.fdr_alpha``)."""

    band: float
    alpha: float


@dataclass(frozen=True)
class Claim:
    """What one published row claims: ``kind`` (:data:`EFFECT`, ...), ``sign`` ('+' or '-' of an
    effect or a significant coefficient), ``value`` (the published figure, NaN for none),
    ``threshold`` (the p-value of a none-significant claim) and ``banded`` (whether the
    equivalence band applies: Hedges' g)."""

    kind: str
    sign: str = ""
    value: float = math.nan
    threshold: float = math.nan
    banded: bool = False


def sign(value: float) -> str:
    """'+', '-' or '0' of a finite value; '' for NaN."""
    if not math.isfinite(value):
        return ""
    return "+" if value > 0 else "-" if value < 0 else "0"


def claim_of(published: Mapping[str, object], band: float) -> Claim:
    """The claim of one published row (:data:`storyflow.tables.PUBLISHED`).

    ``direction`` decides first: ``p > X`` is a claim that no p falls below X; an order
    (``a > b``) is an order; ``+``/``-`` an effect in that direction (a significant one for a
    ``regression_p`` row); ``0`` no effect. Without a direction, a Hedges' g inside ``band`` is a
    claim of no effect and one outside an effect of its sign; any other value is a value.
    """
    value = float(published["value"])  # type: ignore[arg-type]
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
    if banded and math.isfinite(value):
        if abs(value) < band:
            return Claim(NO_EFFECT, value=value, banded=True)
        return Claim(EFFECT, sign=sign(value), value=value, banded=True)
    return Claim(VALUE, value=value)


def number(value: float) -> str:
    """A figure as the report writes it: three significant digits, two below 0.01."""
    return f"{value:.3g}" if abs(value) >= 0.01 or value == 0 else f"{value:.2g}"


def _span(low: float, high: float) -> str:
    return f"our interval, {number(low)} to {number(high)},"


def _published(claim: Claim) -> str:
    return f"the published {number(claim.value)}" if math.isfinite(claim.value) else "the paper's"


def _effect(claim: Claim, low: float, high: float, band: float) -> tuple[str, str]:
    up = claim.sign == "+"
    side, other = ("above", "below") if up else ("below", "above")
    if (low > 0) if up else (high < 0):
        return AGREES, f"{_span(low, high)} lies {side} 0, as {_published(claim)} does"
    if (high < 0) if up else (low > 0):
        return DISAGREES, f"{_span(low, high)} lies {other} 0, the opposite of {_published(claim)}"
    if claim.banded and -band < low and high < band:
        return DISAGREES, (
            f"{_span(low, high)} lies inside ±{number(band)}: no effect of the claimed size "
            f"({_published(claim)})"
        )
    if math.isfinite(claim.value) and low <= claim.value <= high:
        return INCONCLUSIVE, f"{_span(low, high)} holds both 0 and {_published(claim)}"
    return INCONCLUSIVE, f"{_span(low, high)} holds 0"


def _no_effect(claim: Claim, low: float, high: float, band: float) -> tuple[str, str]:
    inside = f"±{number(band)}"
    if -band < low and high < band:
        return AGREES, (
            f"{_span(low, high)} lies inside {inside}, as the paper's no effect "
            f"({number(claim.value)})"
        )
    if low > 0 or high < 0:
        return DISAGREES, (
            f"{_span(low, high)} excludes 0 and reaches beyond {inside}, where the paper reads "
            f"{number(claim.value)} as no effect"
        )
    return INCONCLUSIVE, f"{_span(low, high)} holds 0 but reaches beyond {inside}"


def _order(low: float, high: float) -> tuple[str, str]:
    span = f"our interval of the difference, {number(low)} to {number(high)},"
    if low > 0:
        return AGREES, f"{span} lies above 0: the same order"
    if high < 0:
        return DISAGREES, f"{span} lies below 0: the opposite order"
    return INCONCLUSIVE, f"{span} holds 0: the order is not resolved"


def _value(claim: Claim, low: float, high: float, value: float) -> tuple[str, str]:
    if low <= claim.value <= high:
        return AGREES, f"{_span(low, high)} holds {_published(claim)}"
    return DISAGREES, (
        f"{_span(low, high)} excludes {_published(claim)} "
        f"(ours {'higher' if value > claim.value else 'lower'})"
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
    if ours.validity.startswith("failed"):
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
        return _value(claim, low, high, ours.value)
    return NOT_JUDGED, f"no rule judges a {claim.kind} claim without a published value"


def covers(published: float, ours: Ours) -> str:
    """``ci_covers``: whether our interval holds the published value (n/a without both)."""
    low, high = ours.ci
    if not all(math.isfinite(x) for x in (published, low, high)):
        return NA
    return YES if low <= published <= high else NO


def row(paper: str, published: Mapping[str, object], ours: Ours, rule: Rule) -> dict[str, object]:
    """One :data:`storyflow.tables.REPLICATION` row."""
    claim = claim_of(published, rule.band)
    verdict, reason = judge(claim, ours, rule)
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
        "verdict": verdict,
        "reason": reason,
        "ci_covers": covers(float(published["value"]), ours),  # type: ignore[arg-type]
        "note": ours.note,
    }


def table(
    paper: str, published: pd.DataFrame, ours: Mapping[str, Ours], rule: Rule
) -> pd.DataFrame:
    """The replication table of ``paper``: every published row beside ours (``ours`` by id; a
    row without one is reported as not computed)."""
    rows = [
        row(paper, p, ours.get(str(p["id"]), Ours.missing("no counterpart in storyflow")), rule)
        for p in published.to_dict("records")
    ]
    return tables.REPLICATION.frame(rows)


def computed(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a replication table this run computed: ours has a value or a direction
    (a row without either says in ``note`` why not)."""
    return frame["ours"].notna() | frame["ours_direction"].fillna("").ne("")


def judged(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a replication table carry a verdict (agrees, disagrees, inconclusive)."""
    return frame["verdict"].isin([AGREES, DISAGREES, INCONCLUSIVE])
