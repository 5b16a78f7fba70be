"""The answer to a corpus's contrasts, in one table: is there a difference between the groups?

A researcher's question about a corpus is a contrast (config ``contrasts: [{name, a, b}]``):
do the stories of group a differ in sequentiality from those of group b? For every contrast,
formulation and sequentiality model, and for the mean over the models, :func:`answer_contrasts`
gives Fiction Flows' aggregate of Hedges' g (each model's median of g over the history sizes
h = 1..``nll.max_history``, then the mean over the models;
:func:`storyflow.replication.effects.aggregated_g`, the same resamples for every model) with
its percentile bootstrap interval over stories (or books, for passages of one book), read by
the replication's rule for a claim whose direction is unknown (:func:`read_interval`;
docs/replication.md, "Verdicts": the interval, never the point estimate's sign):

- **a difference**: the interval excludes 0 and reaches beyond the equivalence band
  (``replication.equivalence_band``, in g), with its sign: group a higher or lower;
- **no difference**: the interval holds 0 and lies inside -band..band;
- **smaller than the band**: the interval excludes 0 but lies inside the band (a difference too
  small to matter by the band's measure);
- **inconclusive**: the interval holds 0 and reaches beyond the band; then what would decide it
  (:func:`to_decide`): the stories per group at which the interval, at this estimate and
  spread, would lie inside the band or exclude 0 with ``replication.power``'s chance, 80% by
  default (:mod:`storyflow.replication.decide`), the
  NLL tokens of scoring them and the hours at ``replication.rates``;
- **not tested**: no interval, or a group with fewer than ``stats.min_group_size`` units.

Where the comparison of measures runs on the corpus, the other measures' contrasts get rows too,
read by the same rule from the comparison's g and its normal-approximation interval
(:func:`separation_answers`; one row per contrast, model and story measure).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from storyflow import lmer, stats, tables
from storyflow.contrast_answers import adjusted
from storyflow.contrast_answers.words import (  # re-exported: callers read them here too
    ADJUSTED,
    ANSWERS,
    BLOCK,
    DIFFERENCE,
    EFFECT_SIZE,
    HEADLINE_FORMULATION,
    INCONCLUSIVE,
    MATCHED,
    MEAN,
    MEASURE,
    NO_DIFFERENCE,
    NOT_TESTED,
    OVER_HISTORIES,
    SMALLER,
    UNMATCHED,
)
from storyflow.errors import StoryflowError
from storyflow.replication import decide, intervals
from storyflow.replication.effects import AggregatedG, books_of, contrast_g
from storyflow.replication.fiction_flows import unit_tokens
from storyflow.replication.words import number

__all__ = [
    "ADJUSTED",
    "ANSWERS",
    "BLOCK",
    "DIFFERENCE",
    "EFFECT_SIZE",
    "HEADLINE_FORMULATION",
    "INCONCLUSIVE",
    "MATCHED",
    "MEAN",
    "MEASURE",
    "NOT_TESTED",
    "NO_DIFFERENCE",
    "OVER_HISTORIES",
    "SMALLER",
    "UNMATCHED",
    "AnswerSettings",
    "answer_contrasts",
]  # fmt: skip


@dataclass(frozen=True)
class AnswerSettings:
    """What the answers depend on: the interval's ``confidence``, ``resamples`` and ``seed``
    (``stats``); ``min_group_size`` (units a group needs to be tested) and ``min_sentences``
    (the fewest sentences of a story counted; ``stats``); ``band``, the equivalence band's
    half-width in Hedges' g (``replication.equivalence_band``); ``max_history``, the largest
    history size h summarised (``nll.max_history``); ``rates``, the NLL tokens/s that price a
    decision (``replication.rates``; None: tokens only); ``adjust``, whether each contrast is
    also answered adjusted for length and topic closeness (``stats.adjusted_contrasts``;
    :mod:`storyflow.contrast_answers.adjusted`, R's lme4); ``power``, the chance at which the
    stories to decide are given (``replication.power``, as the verdicts give theirs)."""

    confidence: float
    resamples: int
    seed: int
    min_group_size: int
    min_sentences: int
    band: float
    max_history: int
    rates: decide.Rates | None = None
    adjust: bool = False
    power: float = 0.8

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> AnswerSettings:
        """The settings from a rule's params (:func:`storyflow.plan.contrast_answers.settings`)."""
        return cls(
            confidence=float(params["confidence"]),
            resamples=int(params["resamples"]),
            seed=int(params["seed"]),
            min_group_size=int(params["min_group_size"]),
            min_sentences=int(params["min_sentences"]),
            band=float(params["band"]),
            max_history=int(params["max_history"]),
            rates=decide.Rates.from_params(params.get("rates")),
            adjust=bool(params.get("adjust", False)),
            power=float(params.get("power", 0.8)),
        )


def read_interval(
    low: float, high: float, band: float, names: tuple[str, str] = ("a", "b")
) -> tuple[str, str, str]:
    """The answer of an interval [low, high] of g (group a minus group b) against 0 and the band
    ±``band`` (:func:`storyflow.replication.intervals.read`, worded as an answer): (answer,
    direction, reason in words); ``names`` are the groups' names."""
    a, b = names
    span = f"the interval, {number(low)} to {number(high)},"
    if not (math.isfinite(low) and math.isfinite(high)):
        return NOT_TESTED, "", "no interval (a group without stories scored by every model)"
    outcome = intervals.read(low, high, band)
    up = intervals.side(low, high) == "+"
    direction = ("group a higher" if up else "group a lower") if intervals.side(low, high) else ""
    side = f"{a} {'higher' if up else 'lower'} than {b}"
    inside = f"±{number(band)}"
    if outcome == intervals.Outcome.SMALLER:
        return SMALLER, direction, f"{span} excludes 0 but lies inside {inside}: {side}"
    if outcome == intervals.Outcome.EQUIVALENT:
        return NO_DIFFERENCE, "", f"{span} lies inside {inside}"
    if outcome in (intervals.Outcome.DIFFERENT, intervals.Outcome.BEYOND):
        return DIFFERENCE, direction, f"{span} excludes 0 and reaches beyond {inside}: {side}"
    return INCONCLUSIVE, "", f"{span} holds 0 but reaches beyond {inside}"


def deciding(band: float) -> list[intervals.Target]:
    """The ways an inconclusive answer can decide: its interval inside ±``band`` (no
    difference) or excluding 0 (a difference)."""
    return [
        intervals.Target(
            f"the interval inside ±{number(band)} (no difference)", inside=(-band, band)
        ),
        intervals.Target("the interval excludes 0 (a difference)", line=0.0),
    ]


def to_decide(estimate: float, low: float, high: float, band: float) -> tuple[float, str]:
    """The factor on the units per group at which an inconclusive interval, at ``estimate`` and
    its spread, would decide (:func:`deciding`: whichever needs fewer), and which it would be,
    in words (inf when neither happens at this estimate)."""
    return intervals.to_decide(estimate, low, high, deciding(band))


def decision(
    estimate: float,
    low: float,
    high: float,
    units: float,
    band: float,
    power: float = 0.5,
    confidence: float = 0.95,
) -> tuple[float, str, float, float]:
    """What would decide an inconclusive answer: the units per group at our estimate at which
    the interval (at level ``confidence``) decides with chance ``power`` (0.5: the expected
    interval;
    :func:`to_decide`, :func:`storyflow.replication.intervals.power_factor`), in words, and
    their least and most over the true values the interval holds
    (:func:`storyflow.replication.intervals.factor_range`; inf: some value is decided by no
    sample)."""
    return intervals.units_to_decide(estimate, low, high, deciding(band), units, power, confidence)


@dataclass(frozen=True)
class Cell:
    """One row's place: the ``corpus``, the contrast (``name``, its groups' names ``a``, ``b``),
    the ``formulation``, the ``model`` (or :data:`MEAN`) and the models it rests on."""

    corpus: str
    name: str
    a: str
    b: str
    formulation: str
    model: str
    models: tuple[str, ...]


def answer_row(
    cell: Cell,
    result: AggregatedG,
    settings: AnswerSettings,
    reading: Reading,
    cost: pd.DataFrame | None,
    why: str = "",
) -> dict[str, object]:
    """One :data:`storyflow.tables.CONTRAST_ANSWERS` row from its effect size (``result``);
    ``why``: the headline's reason ('' on every other row)."""
    value = result.value if cell.model == MEAN else result.per_model[cell.model]
    low, high = result.ci
    units = min(result.units_a, result.units_b)
    answer, direction, reason = read_interval(low, high, settings.band, (cell.a, cell.b))
    unit = "matched blocks" if reading.design == MATCHED else "units in a group"
    if answer != NOT_TESTED and units < settings.min_group_size:
        answer, direction = NOT_TESTED, ""
        reason = f"fewer than {settings.min_group_size} {unit} ({reason})"
    n, words, least, most = math.nan, "", math.nan, math.nan
    if answer == INCONCLUSIVE:
        n, words, least, most = decision(
            value, low, high, float(units), settings.band, settings.power, settings.confidence
        )
    found = decide.cost(n, dict(unit_tokens(cost, cell.models, result)), settings.rates)
    return tables.CONTRAST_ANSWERS.row(
        corpus=cell.corpus, measure=MEASURE, contrast=cell.name, group_a=cell.a, group_b=cell.b,
        formulation=cell.formulation, model=cell.model, histories=reading.label,
        design=reading.design, effect_size=EFFECT_SIZE[reading.design], headline=bool(why),
        why=why, g=value, ci_low=low, ci_high=high, confidence=settings.confidence,
        band=settings.band, n_a=result.n_a, n_b=result.n_b, units_a=result.units_a,
        units_b=result.units_b, answer=answer, direction=direction, reason=reason,
        n_to_decide=n, to_decide=words, n_to_decide_min=least, n_to_decide_max=most,
        decide_tokens=found.tokens, decide_hours_cpu=found.hours_cpu,
        decide_hours_gpu=found.hours_gpu, decide_rates=found.rates,
    )  # fmt: skip


def blocks_of(labels: pd.DataFrame) -> dict[str, str]:
    """Each story's block (column :data:`BLOCK` of the stories table: stories sharing a value
    are matched, such as the stories written to one prompt) where it has one, else {}."""
    if BLOCK not in labels:
        return {}
    named = labels[labels[BLOCK].notna() & (labels[BLOCK].astype(str).str.strip() != "")]
    return dict(zip(named["story_id"].astype(str), named[BLOCK].astype(str), strict=True))


@dataclass(frozen=True)
class Reading:
    """What one row reads: the ``formulation``, the ``histories`` (labels of h) and the
    ``design`` (:data:`UNMATCHED` or :data:`MATCHED`)."""

    formulation: str
    histories: tuple[str, ...]
    design: str

    @property
    def label(self) -> str:
        """The histories as the table writes them: '1-H', or one label ('full')."""
        h = self.histories
        return f"{h[0]}-{h[-1]}" if len(h) > 1 else h[0]


def _aggregate(
    part: pd.DataFrame,
    members: tuple[set[str], set[str]],
    models: Sequence[str],
    reading: Reading,
    settings: AnswerSettings,
    units: tuple[Mapping[str, str], Mapping[str, str]],
) -> AggregatedG:
    """The row's effect size and interval: Hedges' g resampling stories (or books) within each
    group, or, for the matched design, g_av resampling blocks
    (:func:`storyflow.replication.effects.contrast_g`)."""
    a, b = members
    clusters, blocks = units
    return contrast_g(
        part, a, b, measure=MEASURE, models=models, histories=list(reading.histories),
        over_histories=OVER_HISTORIES, confidence=settings.confidence,
        resamples=settings.resamples, seed=settings.seed, clusters=clusters,
        blocks=blocks if reading.design == MATCHED else None,
    )  # fmt: skip


def readings(scores: pd.DataFrame, max_history: int, blocked: bool) -> list[Reading]:
    """Every reading of a contrast, the headline's first (:func:`headline`): each formulation
    (context first: docs/method.md, "Which formulation answers a contrast"), the median over
    h = 1..H and the full history alone where it is scored, each design the corpus has."""
    scored = set(scores["history"].astype(str))
    spans = [tuple(str(h) for h in range(1, max_history + 1) if str(h) in scored)]
    spans += [("full",)] if "full" in scored else []
    forms = sorted(formulations(scores), key=lambda f: f != HEADLINE_FORMULATION)
    designs = [MATCHED, UNMATCHED] if blocked else [UNMATCHED]
    return [Reading(f, h, d) for f in forms for h in spans if h for d in designs]


def headline_reason(reading: Reading, model: str) -> str:
    """Why the headline row reads what it reads (docs/method.md, "The headline of a contrast")."""
    form = (
        "the context formulation (no topic term: with one, sequentiality also measures how far a "
        "story strays from its topic; Fiction Flows §4.2, §5.2, §6)"
        if reading.formulation == HEADLINE_FORMULATION
        else f"the {reading.formulation} formulation (the only one scored)"
    )
    design = (
        "matched blocks (the design pairs the stories; g_av, blocks resampled)"
        if reading.design == MATCHED
        else "unmatched groups (the stories are in no shared blocks)"
    )
    models = "the mean over the models" if model == MEAN else f"the one model, {model}"
    return (
        f"the headline: {form}; the median of g over h = {reading.label} (the paper's "
        f"aggregate); {design}; {models}"
    )


def adjusted_rows(
    scores: pd.DataFrame,
    cost: pd.DataFrame | None,
    cell: Cell,
    members: tuple[set[str], set[str]],
    blocks: Mapping[str, str],
    settings: AnswerSettings,
    histories: tuple[str, ...],
) -> dict[str, object]:
    """The row of one contrast, formulation and model adjusted for story length and topic
    closeness (:func:`storyflow.contrast_answers.adjusted.adjusted_fit`), read by the same rule; not
    tested, saying why, when R cannot fit it or a group has fewer than 2 stories."""
    reading = Reading(cell.formulation, histories, ADJUSTED)
    frame = adjusted.story_frame(
        scores, cost, formulation=cell.formulation, model=cell.model, histories=histories
    )
    try:
        lmer.check_r()
        fit = adjusted.adjusted_fit(frame, *members, blocks=blocks, confidence=settings.confidence)
    except StoryflowError as err:
        fit, why = None, f"not fitted: {err}"
    else:
        why = "not fitted: a group has fewer than 2 stories"
    if fit is None:
        empty = AggregatedG(math.nan, (math.nan, math.nan), {cell.model: math.nan}, 0, 0, 0, 0)
        row = answer_row(cell, empty, settings, reading, cost)
        return {**row, "reason": why}
    result = AggregatedG(
        fit.estimate, (fit.low, fit.high), {cell.model: fit.estimate},
        fit.n_a, fit.n_b, fit.n_a, fit.n_b,
    )  # fmt: skip
    row = answer_row(cell, result, settings, reading, cost)
    held = ", ".join(fit.covariates) or "nothing (no covariate has spread)"
    model = (
        f"lmer with a random intercept per block ({fit.blocks} blocks)"
        if fit.blocks
        else "least squares"
    )
    note = (
        f"adjusted for {held} ({model}, t interval on {fit.df:.1f} df); unadjusted, the same "
        f"model gives {number(fit.unadjusted)}"
    )
    return {**row, "reason": f"{row['reason']}; {note}"}


def _text(value: object) -> str:
    """A label read back from CSV: '' where it was empty (read as NaN)."""
    return value if isinstance(value, str) else ""


def separation_answers(
    separation: pd.DataFrame, settings: AnswerSettings, *, corpus: str, leave_out: str = ""
) -> list[dict[str, object]]:
    """The rows of the other measures' contrasts, from the comparison's separation table
    (:data:`storyflow.tables.MEASURE_SEPARATION`: one Hedges' g per contrast, model and story
    measure, with a normal-approximation interval at ``stats.confidence``, not a bootstrap),
    read by the same rule; ``formulation`` and ``histories`` are '' and ``model`` '' for a
    measure that depends on no model. A measure whose name starts with ``leave_out`` + '.'
    (sequentiality's own, answered the paper's way) is left out; a row that is not tested or
    rests on a model that failed its validity check (``failed``) is not tested. Deciding is
    priced in units only: no NLL plan covers the other measures."""
    rows = []
    for r in separation.to_dict("records"):
        if leave_out and str(r["measure"]).startswith(f"{leave_out}."):
            continue
        low, high, g = float(r["g_low"]), float(r["g_high"]), float(r["g"])
        names = (str(r["group_a"]), str(r["group_b"]))
        answer, direction, reason = read_interval(low, high, settings.band, names)
        units = min(int(r["n_a"]), int(r["n_b"]))
        if not r["tested"] or units < settings.min_group_size:
            answer, direction = NOT_TESTED, ""
            reason = f"fewer than {settings.min_group_size} scored stories in a group"
        elif not r["valid"]:
            answer, direction = NOT_TESTED, ""
            reason = f"rests on a model that failed its validity check ({_text(r['failed'])})"
        n, words, least, most = (
            decision(g, low, high, float(units), settings.band, settings.power, settings.confidence)
            if answer == INCONCLUSIVE
            else (math.nan, "", math.nan, math.nan)
        )
        rows.append(
            tables.CONTRAST_ANSWERS.row(
                corpus=corpus, measure=str(r["measure"]), contrast=str(r["contrast"]),
                group_a=names[0], group_b=names[1], formulation="", model=_text(r["model"]),
                histories="", design=UNMATCHED, effect_size="g", headline=False, why="", g=g,
                ci_low=low, ci_high=high, confidence=settings.confidence, band=settings.band,
                n_a=int(r["n_a"]), n_b=int(r["n_b"]), units_a=int(r["n_a"]),
                units_b=int(r["n_b"]), answer=answer, direction=direction, reason=reason,
                n_to_decide=n, to_decide=words,
                n_to_decide_min=least, n_to_decide_max=most, decide_tokens=math.nan,
                decide_hours_cpu=math.nan, decide_hours_gpu=math.nan, decide_rates="",
            )
        )  # fmt: skip
    return rows


def _contrast_rows(
    scores: pd.DataFrame,
    place: Cell,
    members: tuple[set[str], set[str]],
    units: tuple[Mapping[str, str], Mapping[str, str]],
    settings: AnswerSettings,
    cost: pd.DataFrame | None,
) -> list[dict[str, object]]:
    """One contrast's rows (``place``: its corpus, name and groups), the headline first: every
    :func:`readings` x model (and the mean of several models), then the adjusted rows."""
    models = sorted(scores["model"].unique())
    a_ids, b_ids = members
    shared = {units[1].get(i) for i in a_ids} & {units[1].get(i) for i in b_ids} - {None}
    blocked = len(shared) >= settings.min_group_size
    rows: list[dict[str, object]] = []
    for reading in readings(scores, settings.max_history, blocked):
        part = scores[scores["formulation"] == reading.formulation]
        every = [m for m in models if m in set(part["model"])]
        mean = [(MEAN, tuple(every))] if len(every) > 1 else []
        for model, used in mean + [(m, (m,)) for m in every]:  # the mean: the headline
            result = _aggregate(part, members, used, reading, settings, units)
            cell = replace(place, formulation=reading.formulation, model=model, models=used)
            why = headline_reason(reading, model) if not rows else ""
            rows.append(answer_row(cell, result, settings, reading, cost, why))
    if not settings.adjust:
        return rows
    for reading in readings(scores, settings.max_history, False):
        part = scores[scores["formulation"] == reading.formulation]
        for model in [m for m in models if m in set(part["model"])]:
            if reading.histories == ("full",):
                continue
            cell = replace(place, formulation=reading.formulation, model=model, models=(model,))
            spans = reading.histories
            rows.append(adjusted_rows(scores, cost, cell, members, units[1], settings, spans))
    return rows


def answer_contrasts(
    scores: pd.DataFrame,
    labels: pd.DataFrame,
    contrasts: Sequence[Mapping[str, Any]],
    settings: AnswerSettings,
    *,
    corpus: str,
    cost: pd.DataFrame | None = None,
    separation: pd.DataFrame | None = None,
    leave_out: str = "",
) -> pd.DataFrame:
    """The :data:`storyflow.tables.CONTRAST_ANSWERS` table of one corpus.

    Args:
        scores: Every model's story sequentiality (:data:`storyflow.tables.STORY_SEQUENTIALITY`;
            stories with fewer than ``settings.min_sentences`` sentences are left out here).
        labels: The corpus's stories (:data:`storyflow.tables.STORIES`: ``story_id``, the label
            columns the contrasts filter on, ``document_id`` for passages of books).
        contrasts: The corpus's contrasts (``[{name, a, b}, ...]``).
        settings: The interval, the band, the histories and the rates.
        corpus: The corpus's name (its rows' ``corpus``).
        cost: The models' NLL plans (:data:`storyflow.tables.NLL_COST`), which price a
            decision in tokens (None: not priced).
        separation: The comparison's separation table of the corpus (None: the comparison
            does not run on it), whose other measures get rows too (:func:`separation_answers`;
            ``leave_out``: sequentiality's name, whose story measures are answered here).

    Each model's row has its own interval (the model's median g over h, resampled alone); the
    mean row's value is the mean of the model rows' values, its interval that of the mean.
    """
    scores = scores[scores["n_sentences"] >= settings.min_sentences]
    members = stats.contrast_members(labels, contrasts)
    units = (books_of(labels), blocks_of(labels))
    rows = []
    for contrast in contrasts:
        name = str(contrast["name"])
        a, b = stats.group_label(contrast, "a"), stats.group_label(contrast, "b")
        place = Cell(corpus, name, a, b, "", "", ())
        rows += _contrast_rows(scores, place, members[name], units, settings, cost)
    if separation is not None:
        rows += separation_answers(separation, settings, corpus=corpus, leave_out=leave_out)
    return tables.CONTRAST_ANSWERS.frame(rows)


def formulations(scores: pd.DataFrame) -> list[str]:
    """The formulations scored, in order of first appearance (``topic``, ``context``)."""
    return list(dict.fromkeys(scores["formulation"].astype(str)))
