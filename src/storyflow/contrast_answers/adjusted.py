"""A contrast adjusted for what else differs between its groups: length and closeness to topic.

Two groups of stories can differ in sequentiality because they differ in something the measure
is sensitive to besides the group. Story length is one: it sets how many sentences reach a
history of h and so moves every story mean. Closeness to the topic is another: under the topic
formulation, sequentiality rewards sentences that stray from the topic (Fiction Flows §4.2,
§5.2: ``fiction_flows.txt`` l. 127, l. 189). :func:`adjusted_fit` answers the contrast with both
held fixed: a linear model of each story's sequentiality, averaged over h = 1..H and divided by
the two groups' pooled SD (so the group coefficient is in the units of Hedges' g), on

- ``in_a``: 1 for group a, 0 for group b; its coefficient ``b_std`` is the adjusted
  difference, group a minus group b, in pooled SDs;
- ``log_sentences``, ``log_tokens``: the log of the story's sentences and of its tokens under
  the model (the NLL plan's ``story_tokens``), each standardised;
- ``topic_term`` (where the corpus has topics and both formulations are scored): the story's
  NLL without the topic minus with it (nats/token, the context formulation's ``nll_base``
  minus the topic formulation's): how much the model finds the topic predicts the story,
  standardised. It is the model's own measure of the story–topic match that Fiction Flows names,
  read from the scores already on disk (no embedding model);
- a random intercept per block (``(1 | block)``) where the stories are matched, fitted by
  ``lmerTest::lmer`` (ML, Satterthwaite df); ordinary least squares (R's ``lm``) otherwise.

The interval is the coefficient's t interval at ``confidence`` (Satterthwaite or residual df).
The same model without the covariates gives the unadjusted coefficient beside it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from storyflow import lmer

#: The covariates, in formula order (each standardised before the fit).
COVARIATES = ("log_sentences", "log_tokens", "topic_term")
#: The group indicator's column (1 = group a).
GROUP = "in_a"


@dataclass(frozen=True)
class AdjustedFit:
    """One contrast's adjusted difference: ``estimate`` (``b_std``: group a minus group b, in
    pooled SDs of the story's mean sequentiality over h), its interval [``low``, ``high``] at
    the fit's confidence with ``df``, ``unadjusted`` (the same model without covariates), the
    ``covariates`` fitted (those with spread), the stories ``n_a``, ``n_b`` and the ``blocks``
    of the random intercept (0: none, least squares)."""

    estimate: float
    low: float
    high: float
    df: float
    unadjusted: float
    covariates: tuple[str, ...]
    n_a: int
    n_b: int
    blocks: int


def story_frame(
    scores: pd.DataFrame,
    cost: pd.DataFrame | None,
    *,
    formulation: str,
    model: str,
    histories: Sequence[str],
) -> pd.DataFrame:
    """One row per story the model scored in ``formulation``: ``y``, its mean ``seq`` over
    ``histories`` (nats/token); ``log_sentences``; ``log_tokens`` (NaN without an NLL plan);
    ``topic_term`` (nats/token; NaN unless both formulations are scored)."""
    mine = scores[scores["model"] == model]
    part = mine[(mine["formulation"] == formulation) & mine["history"].isin(list(histories))]
    frame = part.groupby("story_id").agg(y=("seq", "mean"), n_sentences=("n_sentences", "first"))
    frame["log_sentences"] = np.log(frame["n_sentences"].astype(float))
    tokens = pd.Series(np.nan, index=frame.index)
    if cost is not None and not cost.empty:
        planned = cost[(cost["model"] == model) & (cost["formulation"] == formulation)]
        tokens = planned.set_index("story_id")["story_tokens"].reindex(frame.index).astype(float)
    frame["log_tokens"] = np.log(tokens.where(tokens > 0))
    base = mine.groupby(["formulation", "story_id"])["nll_base"].first()
    if {"topic", "context"} <= set(base.index.get_level_values(0)):
        frame["topic_term"] = (base["context"] - base["topic"]).reindex(frame.index)
    else:
        frame["topic_term"] = np.nan
    return frame.drop(columns="n_sentences")


def _standardised(values: pd.Series) -> pd.Series | None:
    """``values`` minus their mean over their SD; None when they have no spread."""
    sd = float(values.std(ddof=1))
    return None if not (math.isfinite(sd) and sd > 0) else (values - values.mean()) / sd


def adjusted_fit(
    frame: pd.DataFrame,
    a: Collection[str],
    b: Collection[str],
    *,
    blocks: Mapping[str, str],
    confidence: float,
) -> AdjustedFit | None:
    """The contrast group a vs b adjusted for the covariates of ``frame``
    (:func:`story_frame`), with a random intercept per block where ``blocks`` matches stories
    of both groups; None when a group has fewer than 2 stories (call
    :func:`storyflow.lmer.check_r` first)."""
    ids = frame.index.astype(str)
    frame = frame.assign(**{GROUP: ids.isin(list(a)).astype(float)})[ids.isin([*a, *b])]
    frame = frame.dropna(subset=["y"])
    n_a = int(frame[GROUP].sum())
    n_b = len(frame) - n_a
    if n_a < 2 or n_b < 2:
        return None
    y = frame["y"]
    pooled = math.sqrt(
        ((n_a - 1) * y[frame[GROUP] == 1].var() + (n_b - 1) * y[frame[GROUP] == 0].var())
        / (n_a + n_b - 2)
    )
    data = pd.DataFrame({"y": y / pooled if pooled > 0 else y, GROUP: frame[GROUP]})
    used: list[str] = []
    for name in COVARIATES:
        column = frame[name]
        z = _standardised(column) if column.notna().all() else None
        if z is not None:
            data[name], used = z, [*used, name]
    block = pd.Series([blocks.get(i) for i in data.index.astype(str)], index=data.index)
    shared = set(block[data[GROUP] == 1].dropna()) & set(block[data[GROUP] == 0].dropna())
    random = ""
    if len(shared) >= 2:
        data["block"] = [v if v in shared else f"story:{i}" for i, v in block.items()]
        random = " + (1 | block)"
    fitted = []
    for terms in ([GROUP, *used], [GROUP]):
        formula = "y ~ " + " + ".join(terms) + random
        if random:
            levels = sorted(set(data["block"]))
            fit = lmer.fit_lmer(data, formula, {"block": levels}, group="block")
        else:
            fit = lmer.fit_lm(data, formula, {})
        fitted.append(fit.coefficients.set_index("term").loc[GROUP])
    row, plain = fitted
    half = float(scipy_stats.t.ppf((1 + confidence) / 2, row["df"])) * float(row["se"])
    estimate = float(row["estimate"])
    return AdjustedFit(
        estimate=estimate,
        low=estimate - half,
        high=estimate + half,
        df=float(row["df"]),
        unadjusted=float(plain["estimate"]),
        covariates=tuple(used),
        n_a=n_a,
        n_b=n_b,
        blocks=len(shared) if random else 0,
    )
