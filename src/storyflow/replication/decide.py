"""What it would take to decide an inconclusive replication row, and the small-telescopes
reading of a claimed effect (docs/replication.md, "What it would take").

Both read our interval as a normal-theory one would behave when the sample grows: at our point
estimate, each side's distance from the estimate (its half-width on that side) shrinks as
1/sqrt(n). So an interval of half-width w that should come to exclude a value at distance d from
our estimate needs (w/d)^2 times the units it rests on, per group (:func:`factor_to_exclude`).
This is the sample at which the *expected* interval just decides (50% power at our estimate);
the verdicts scale it to a stated power (``replication.power``, 80%:
:func:`storyflow.replication.intervals.power_factor`); at our estimate and spread, not at the
paper's.

**Small telescopes** (Simonsohn 2015, *Psychological Science* 26(5)): d33 is the effect the
original study's sample had 33% power to detect (two-sided two-sample t-test at 0.05,
:func:`d33`). A replication whose interval lies entirely below d33 (on the claimed side of 0)
says the effect, if any, is too small for the original to have seen: the original's evidence
does not support it. An interval that still holds d33 does not rule that out; the units at
which it would (at our estimate) are :func:`factor_to_exclude` of d33.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storyflow.lm.rates import CPU_DEFAULT, GPU_DEFAULT

#: The power that defines d33 (Simonsohn 2015) and the test level it is computed at.
SMALL_TELESCOPE_POWER = 1 / 3
SMALL_TELESCOPE_ALPHA = 0.05


def factor_to_exclude(estimate: float, low: float, high: float, target: float) -> float:
    """How many times its units (per group) our interval [low, high] around ``estimate`` needs
    to exclude ``target``, the side facing ``target`` shrinking as 1/sqrt(n); inf when
    ``target`` is the estimate itself, below 1 when the interval already excludes it."""
    if target == estimate:
        return math.inf
    width = (estimate - low) if target < estimate else (high - estimate)
    return (width / abs(target - estimate)) ** 2


def factor_inside(estimate: float, low: float, high: float, lower: float, upper: float) -> float:
    """How many times its units our interval needs to lie inside [lower, upper] (inf when the
    estimate is not inside it: at our estimate it never will)."""
    if not lower < estimate < upper:
        return math.inf
    return max(
        ((high - estimate) / (upper - estimate)) ** 2, ((estimate - low) / (estimate - lower)) ** 2
    )


def d33(n_a: float, n_b: float) -> float:
    """The Hedges' g (≈ Cohen's d at these sizes) that a two-sided two-sample t-test at
    :data:`SMALL_TELESCOPE_ALPHA` detects with :data:`SMALL_TELESCOPE_POWER` power with
    ``n_a`` and ``n_b`` observations (the noncentral t distribution; scipy)."""
    from scipy import optimize, stats  # the plan imports this module: scipy only when used

    df = n_a + n_b - 2
    scale = math.sqrt(n_a * n_b / (n_a + n_b))
    critical = stats.t.ppf(1 - SMALL_TELESCOPE_ALPHA / 2, df)

    def power(d: float) -> float:
        noncentral = d * scale
        return float(
            stats.nct.sf(critical, df, noncentral) + stats.nct.cdf(-critical, df, noncentral)
        )

    upper = 0.25
    while power(upper) < SMALL_TELESCOPE_POWER:  # bracket the root (power rises with d)
        upper *= 2
    return float(optimize.brentq(lambda d: power(d) - SMALL_TELESCOPE_POWER, 1e-9, upper))


@dataclass(frozen=True)
class Telescope:
    """The small-telescopes reading of one effect claim: ``d33`` (g, on the claimed side);
    ``reading`` in words; ``factor`` the multiple of our units at which our interval would
    exclude d33 (NaN when it already does, or when our estimate is at or beyond d33);
    ``excludes``: whether our interval lies wholly below d33 on the claimed side (on the other
    side of 0 too), the reading that says the original's evidence does not support it."""

    d33: float
    reading: str
    factor: float
    excludes: bool = False


def telescope(sign: str, estimate: float, low: float, high: float, d_33: float) -> Telescope:
    """The small-telescopes reading of our interval for an effect claimed with ``sign``."""
    flip = -1.0 if sign == "-" else 1.0
    est, lo, hi = (flip * estimate, flip * low, flip * high)
    if flip < 0:
        lo, hi = hi, lo
    target = f"d33 = {flip * d_33:.3g}"
    if hi < 0:
        return Telescope(
            d_33,
            f"our interval lies on the other side of 0 from the claim, so below {target} too",
            math.nan,
            excludes=True,
        )
    if hi < d_33:
        return Telescope(
            d_33,
            f"our interval excludes {target}: an effect this small was not detectable with the "
            "original's sample, so its result does not support it",
            math.nan,
            excludes=True,
        )
    if est >= d_33:
        reading = f"our interval holds {target} and our estimate is beyond it"
        return Telescope(d_33, reading, math.nan)
    return Telescope(
        d_33,
        f"our interval holds {target}: not ruled out",
        factor_to_exclude(est, lo, hi, d_33),
    )


@dataclass(frozen=True)
class ModelRate:
    """One model's NLL scoring rates (tokens/s) and where each was measured: ``cpu`` and
    ``cpu_basis`` (its NLL time estimate's rate: ``nll.tokens_per_second``, ``cost.rates`` or
    its packaged source's, on a 2-core CPU), ``gpu`` and ``gpu_basis`` (the measured model
    shape on one GPU nearest its own, at least as large): resolved by
    :func:`storyflow.lm.rates.model_rates`, carried here in a rule's params."""

    cpu: float
    gpu: float
    cpu_basis: str = ""
    gpu_basis: str = ""


@dataclass(frozen=True)
class Rates:
    """NLL scoring rates (tokens/s) at which a sample's cost is given in hours: per model in
    ``models`` (:class:`ModelRate`), else ``cpu`` (a 2-core CPU's) and ``gpu`` (one GPU's with
    the 8B shape), ``replication.rates``; docs/engine.md gives where each was measured."""

    cpu: float
    gpu: float
    models: Mapping[str, ModelRate] = field(default_factory=dict)

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None) -> Rates | None:
        """The rates a rule's params give (storyflow.plan.replication.rates); None for none."""
        if not params:
            return None
        models = {name: ModelRate(**rate) for name, rate in (params.get("models") or {}).items()}
        return cls(float(params["cpu"]), float(params["gpu"]), models)

    def of(self, model: str) -> ModelRate:
        """``model``'s rates: its own, else the defaults (named as such: a model the config
        does not list, such as one a test builds)."""
        return self.models.get(model) or ModelRate(self.cpu, self.gpu, CPU_DEFAULT, GPU_DEFAULT)

    def basis(self, models: Sequence[str]) -> str:
        """Which rate prices each of ``models``, in words (the ``decide_rates`` column)."""
        return "; ".join(
            f"{m}: {rate.cpu:,.0f} tok/s CPU ({rate.cpu_basis}), {rate.gpu:,.0f} tok/s GPU "
            f"({rate.gpu_basis})"
            for m in models
            for rate in [self.of(m)]
        )


@dataclass(frozen=True)
class Decision:
    """What it would take to decide one row (the :data:`storyflow.tables.REPLICATION` columns of
    the same names): ``n_to_decide`` units per group (NaN: not an inconclusive row, or no
    sample decides it at our estimate), ``to_decide`` in words, the small-telescopes ``d33``,
    ``small_telescopes``, ``excludes_d33`` (:attr:`Telescope.excludes`) and
    ``n_to_exclude_d33``, and the NLL cost of ``n_to_decide`` units
    per group: ``tokens`` and hours at :class:`Rates` (``rates``: which priced each model);
    ``n_to_decide_min``/``n_to_decide_max``, the units per group over the true values our
    interval holds (:func:`storyflow.replication.intervals.factor_range`; inf: some value there
    is decided by no sample), all at the rule's power; ``beyond_corpus``: whether
    ``n_to_decide`` exceeds the units the corpus holds (then no sample of it decides)."""

    n_to_decide: float = math.nan
    to_decide: str = ""
    d33: float = math.nan
    small_telescopes: str = ""
    excludes_d33: bool = False
    n_to_exclude_d33: float = math.nan
    tokens: float = math.nan
    hours_cpu: float = math.nan
    hours_gpu: float = math.nan
    n_to_decide_min: float = math.nan
    n_to_decide_max: float = math.nan
    rates: str = ""
    beyond_corpus: bool = False


def units_needed(units: float, factor: float, *, unbounded: float = math.nan) -> float:
    """Units per group at ``factor`` times ``units`` (rounded up; NaN when either is unknown,
    ``unbounded`` when the factor is infinite)."""
    if not math.isfinite(units) or math.isnan(factor):
        return math.nan
    if math.isinf(factor):
        return unbounded
    return float(math.ceil(units * max(factor, 1.0)))


@dataclass(frozen=True)
class Cost:
    """The NLL cost of a sample: ``tokens``, and ``hours_cpu``/``hours_gpu`` at each model's own
    rate (NaN where unknown); ``rates`` says which rate priced each model."""

    tokens: float = math.nan
    hours_cpu: float = math.nan
    hours_gpu: float = math.nan
    rates: str = ""


def cost(n_per_group: float, unit_tokens: Mapping[str, float], rates: Rates | None) -> Cost:
    """NLL tokens of scoring ``n_per_group`` units in each of two groups with the models of
    ``unit_tokens`` (NLL tokens one unit costs, by model), and the hours with each model at
    its own rate (:meth:`Rates.of`): the models' hours add up, as their jobs do."""
    per_unit = sum(unit_tokens.values()) if unit_tokens else math.nan
    tokens = 2 * n_per_group * per_unit
    if not math.isfinite(tokens) or rates is None:
        return Cost(tokens)
    units = 2 * n_per_group
    return Cost(
        tokens,
        sum(units * t / rates.of(m).cpu for m, t in unit_tokens.items()) / 3600,
        sum(units * t / rates.of(m).gpu for m, t in unit_tokens.items()) / 3600,
        rates.basis(list(unit_tokens)),
    )
