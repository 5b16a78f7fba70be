"""Tension across groups of stories: group means, contrasts, and the tables other stages read.

- :func:`group_means`: per forecaster × judge × story type × measure, the mean, SD (n − 1) and a
  percentile-bootstrap CI over stories (:meth:`storyflow.bootstrap.Resampling.mean_ci`: inside the
  statistic's range, where a t interval of a share at n = 4 reaches below 0 or above 1). NaN
  values (e.g. a story with no peak) are left out and not counted. Every group of two or more
  stories gets its interval; one with fewer than ``stats.min_group_size`` stories is flagged
  (``flag``: its interval rests on few stories, and it enters no test).
- :func:`paired_effects`: HANNA's design, one human story and six LLM stories per prompt: each
  LLM vs the human story of the same prompt, and all LLMs (per prompt, the mean of its LLM
  stories) vs the human; the mean paired difference with a bootstrap CI (prompts resampled),
  paired t, Wilcoxon signed-rank and Hedges' g with CI, with and without the stories that carry
  chat artefacts (a pair is dropped when either story has one).
- :func:`contrast_effects`: corpora without prompt pairs (HIPPOCORPUS story types): the
  configured contrasts "a vs b", the difference of means with a bootstrap CI (each group
  resampled), Welch's t and Hedges' g.

  A contrast with fewer than ``stats.min_group_size`` pairs (paired) or stories in a group
  (unpaired) keeps its sizes and means (and the difference) but is not tested: no CI, t,
  Wilcoxon or g (``tested`` False, ``flag`` says why).
- :func:`likelihood_vs_sampled`: Spearman's ρ between the story PMI (nats/token) and the sampled
  no-rate.
- :func:`story_measures`: the long table of the cross-measure comparison, one row per story ×
  model × measure for every story of the corpus (NaN for excluded stories).

Every group-mean and effect row carries ``valid`` and ``failed``: whether its forecaster and
judge passed their validity checks (:func:`storyflow.measures.tension.verdict.labels`).
Positive t and g mean group a higher.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from storyflow import tables
from storyflow.bootstrap import Statistics
from storyflow.measures.tension.validity import read_checks
from storyflow.measures.tension.verdict import label_frame
from storyflow.settings import settings_from
from storyflow.stats import contrast_members, group_label, hedges_g, welch_t

log = logging.getLogger(__name__)

#: Units of the story statistics (for the story-measures table).
UNITS = {
    "no_rate": "share of endings (0-1)",
    "late_no_rate": "share of endings (0-1)",
    "post_spike_convergence": "percent change of the no-rate after a peak (-100..0)",
    "inflection_rate": "share of cuts (0-1)",
    "pmi": "nats/token",
}
KEY = ["model", "judge"]
#: The validity labels a table gets from the checks (:func:`label_frame`), after its rows.
LABELS = tuple(tables.VALIDITY_LABELS)


def measure_columns(stories: pd.DataFrame) -> list[str]:
    """The story statistics of a tension story table, in order."""
    fixed = ["no_rate", "late_no_rate", "post_spike_convergence"]
    return fixed + [c for c in stories.columns if c.startswith("inflection_rate_")]


def long_scores(stories: pd.DataFrame) -> pd.DataFrame:
    """One row per story × model × judge × measure (``value``; NaN rows dropped)."""
    long = stories.melt(
        id_vars=["story_id", "story_type", *KEY],
        value_vars=measure_columns(stories),
        var_name="measure",
        value_name="value",
    )
    return long.dropna(subset=["value"])


def too_small(n: int, settings: Statistics, what: str = "stories") -> str:
    """The flag of a group of ``n`` ``what`` below ``min_group_size`` ('' when large enough)."""
    if n >= settings.min_group_size:
        return ""
    return f"{n} {what} < stats.min_group_size ({settings.min_group_size}): not tested"


def mean_interval(values: np.ndarray, settings: Statistics) -> dict[str, float | str]:
    """The columns mean, sd, ci_low, ci_high and flag of a group's values: the
    percentile-bootstrap CI of the mean (:meth:`storyflow.bootstrap.Resampling.mean_ci`; NaN for
    a single story). A group below ``min_group_size`` keeps its interval (inside the statistic's
    range at any n), flagged as resting on few stories."""
    n = len(values)
    if n == 0:
        return {
            "mean": math.nan,
            "sd": math.nan,
            "ci_low": math.nan,
            "ci_high": math.nan,
            "flag": "no story with a value",
        }
    mean, low, high = settings.mean_ci(values)
    return {
        "mean": mean,
        "sd": float(values.std(ddof=1)) if n >= 2 else math.nan,
        "ci_low": low,
        "ci_high": high,
        "flag": too_small(n, settings).replace("not tested", "an interval of few stories"),
    }


def group_means(
    stories: pd.DataFrame,
    k: int,
    settings: Statistics,
    checks: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Mean, SD and CI per model × judge × story type × measure (:data:`tables.TENSION_GROUPS`),
    labelled with the validity ``checks`` (:data:`tables.VALIDITY`; None: none, every row
    ``valid`` False)."""
    rows = []
    for (model, judge, group, measure), grp in long_scores(stories).groupby(
        [*KEY, "story_type", "measure"], sort=False
    ):
        values = grp["value"].to_numpy(float)
        rows.append(
            {
                "model": model,
                "judge": judge,
                "k": k,
                "story_type": group,
                "measure": measure,
                "n": len(values),
                **mean_interval(values, settings),
            }
        )
    frame = tables.TENSION_GROUPS.partial(rows, omit=LABELS)
    checks = tables.VALIDITY.empty() if checks is None else checks
    return tables.TENSION_GROUPS.frame(label_frame(frame, checks))


EFFECT_STATISTICS = [
    "diff", "diff_ci_low", "diff_ci_high", "t", "p_t", "w", "p_w", "g", "g_ci_low", "g_ci_high"
]  # fmt: skip


def _paired_row(a: np.ndarray, b: np.ndarray, settings: Statistics) -> dict[str, object]:
    """The mean paired difference ``a`` − ``b`` with its bootstrap CI (pairs resampled), paired
    t, Wilcoxon and Hedges' g of ``a`` − ``b`` (same prompts in the same order); below
    ``min_group_size`` pairs only the difference."""
    out: dict[str, object] = dict.fromkeys(EFFECT_STATISTICS, math.nan)
    diff = a - b
    if len(diff):
        out["diff"] = float(diff.mean())
    out["flag"] = too_small(len(diff), settings, "pairs")
    out["tested"] = not out["flag"]
    if not out["tested"]:
        return out
    _, out["diff_ci_low"], out["diff_ci_high"] = settings.mean_ci(diff)
    if diff.std() > 0:
        res = sps.ttest_rel(a, b)
        out["t"], out["p_t"] = float(res.statistic), float(res.pvalue)
    if np.any(diff != 0):
        res = sps.wilcoxon(a, b, zero_method="wilcox")
        out["w"], out["p_w"] = float(res.statistic), float(res.pvalue)
    if a.std() > 0 or b.std() > 0:
        out["g"], out["g_ci_low"], out["g_ci_high"] = hedges_g(a, b, settings.confidence)
    return out


def difference_ci(a: np.ndarray, b: np.ndarray, settings: Statistics) -> tuple[float, float]:
    """Percentile-bootstrap CI of mean(a) − mean(b), each group resampled on its own
    (:func:`storyflow.bootstrap.interval`)."""

    def difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return x.mean(axis=axis) - y.mean(axis=axis)

    return settings.interval((a, b), difference, min_size=1)


def _labelled_effects(rows: list[dict[str, Any]], checks: pd.DataFrame | None) -> pd.DataFrame:
    frame = tables.TENSION_EFFECTS.partial(rows, omit=LABELS)
    checks = tables.VALIDITY.empty() if checks is None else checks
    return tables.TENSION_EFFECTS.frame(label_frame(frame, checks))


def paired_effects(
    stories: pd.DataFrame,
    labels: pd.DataFrame,
    k: int,
    settings: Statistics,
    checks: pd.DataFrame | None = None,
    reference: str = "Human",
) -> pd.DataFrame:
    """``reference`` vs each other group and vs all of them, paired by ``prompt_id``
    (:data:`tables.TENSION_EFFECTS`; group a = ``reference``, so ``diff``, t and g are
    reference − group, e.g. Human − LLM). A group with several stories of a prompt ("all LLMs")
    enters with their mean.

    ``labels``: the corpus's stories table (story_id, prompt_id, artefact); ``checks``: the
    validity table the rows are labelled with.
    """
    meta = labels.drop_duplicates("story_id").set_index("story_id")[["prompt_id", "artefact"]]
    scores = long_scores(stories).join(meta, on="story_id")
    rows = []
    for (model, judge, measure), grp in scores.groupby([*KEY, "measure"], sort=False):
        ref = grp[grp["story_type"] == reference].set_index("prompt_id")
        others = grp[grp["story_type"] != reference]
        sides = [(g, sub) for g, sub in others.groupby("story_type", sort=True)]
        sides.append(("all LLMs", others))
        for name, sub in sides:
            for artefacts in ("included", "excluded"):
                a_side = sub if artefacts == "included" else sub[~sub["artefact"].astype(bool)]
                r_side = ref if artefacts == "included" else ref[~ref["artefact"].astype(bool)]
                per_prompt = a_side.groupby("prompt_id")["value"].mean()
                common = per_prompt.index.intersection(r_side.index)
                a = r_side.loc[common, "value"].to_numpy(float)
                b = per_prompt.loc[common].to_numpy(float)
                rows.append(
                    {
                        "model": model,
                        "judge": judge,
                        "k": k,
                        "contrast": f"{reference} vs {name}",
                        "group_a": reference,
                        "group_b": name,
                        "measure": measure,
                        "artefacts": artefacts,
                        "pairing": "prompt",
                        "n_a": len(a),
                        "n_b": len(b),
                        "mean_a": a.mean() if len(a) else math.nan,
                        "mean_b": b.mean() if len(b) else math.nan,
                        **_paired_row(a, b, settings),
                    }
                )
    return _labelled_effects(rows, checks)


def contrast_effects(
    stories: pd.DataFrame,
    labels: pd.DataFrame,
    contrasts: Sequence[Mapping[str, object]],
    k: int,
    settings: Statistics,
    checks: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Unpaired contrasts (the difference of means a − b with its bootstrap CI, Welch's t,
    Hedges' g) for corpora without prompt pairs; ``checks``: the validity table the rows are
    labelled with."""
    members = contrast_members(labels, contrasts)
    scores = long_scores(stories)
    rows = []
    for (model, judge, measure), grp in scores.groupby([*KEY, "measure"], sort=False):
        for contrast in contrasts:
            ids_a, ids_b = members[str(contrast["name"])]
            a = grp.loc[grp["story_id"].isin(ids_a), "value"].to_numpy(float)
            b = grp.loc[grp["story_id"].isin(ids_b), "value"].to_numpy(float)
            flag = too_small(min(len(a), len(b)), settings, "stories in a group")
            row = {
                "model": model,
                "judge": judge,
                "k": k,
                "contrast": contrast["name"],
                "group_a": group_label(contrast, "a"),
                "group_b": group_label(contrast, "b"),
                "measure": measure,
                "artefacts": "included",
                "pairing": "none",
                "n_a": len(a),
                "n_b": len(b),
                "mean_a": a.mean() if len(a) else math.nan,
                "mean_b": b.mean() if len(b) else math.nan,
                **dict.fromkeys(EFFECT_STATISTICS, math.nan),
                "tested": not flag,
                "flag": flag,
            }
            if len(a) and len(b):
                row["diff"] = a.mean() - b.mean()
            if not flag:
                row["diff_ci_low"], row["diff_ci_high"] = difference_ci(a, b, settings)
                if a.std() > 0 or b.std() > 0:
                    row["t"], _, row["p_t"] = welch_t(a, b)
                    row["g"], row["g_ci_low"], row["g_ci_high"] = hedges_g(
                        a, b, settings.confidence
                    )
            rows.append(row)
    return _labelled_effects(rows, checks)


def story_pmi(pmi: pd.DataFrame) -> pd.DataFrame:
    """Mean PMI over each story's cuts (nats/token), per scoring model."""
    return pmi.groupby(["story_id", "model"], sort=False)["pmi"].mean().reset_index()


def likelihood_vs_sampled(stories: pd.DataFrame, pmi: pd.DataFrame) -> pd.DataFrame:
    """Spearman's ρ of story PMI and sampled no-rate per forecaster × judge × scoring model
    (:data:`tables.TENSION_LIKELIHOOD`); a negative ρ: more predictable remainders, fewer
    missed endings."""
    rows = []
    per_story = story_pmi(pmi)
    for (model, judge), grp in stories.groupby(KEY, sort=False):
        for scorer, scored in per_story.groupby("model", sort=False):
            both = grp.merge(scored, on="story_id").dropna(subset=["no_rate", "pmi"])
            rho, p = (math.nan, math.nan)
            if len(both) >= 3 and both["no_rate"].std() > 0 and both["pmi"].std() > 0:
                res = sps.spearmanr(both["pmi"], both["no_rate"])
                rho, p = float(res.statistic), float(res.pvalue)
            rows.append(
                tables.TENSION_LIKELIHOOD.row(
                    model=model, judge=judge, pmi_model=scorer, n=len(both), spearman_rho=rho, p=p
                )
            )
    return tables.TENSION_LIKELIHOOD.frame(rows)


def story_measures(
    story_ids: Sequence[str],
    stories: pd.DataFrame,
    pmi: pd.DataFrame | None,
    forecasters: Sequence[str],
    judges: Sequence[str],
    pmi_models: Sequence[str],
) -> pd.DataFrame:
    """:data:`tables.STORY_MEASURES` rows for every story id × (forecaster, judge) measure and
    every PMI model; stories without a value (excluded, NaN statistics) get NaN."""
    ids = pd.Index(list(story_ids), name="story_id")
    frames = []
    for model in forecasters:
        for judge in judges:
            sub = stories[(stories["model"] == model) & (stories["judge"] == judge)]
            sub = sub.drop_duplicates("story_id").set_index("story_id").reindex(ids)
            for column in measure_columns(stories):
                base = "inflection_rate" if column.startswith("inflection_rate_") else column
                name = f"tension.{column}.{judge}"
                frames.append(
                    pd.DataFrame(
                        {
                            "story_id": ids,
                            "model": model,
                            "measure": name,
                            "value": sub[column].to_numpy(float),
                            "unit": UNITS[base],
                        }
                    )
                )
    if pmi is not None:
        per_story = story_pmi(pmi)
        for model in pmi_models:
            values = per_story[per_story["model"] == model].set_index("story_id")["pmi"]
            frames.append(
                pd.DataFrame(
                    {
                        "story_id": ids,
                        "model": model,
                        "measure": "tension.pmi",
                        "value": values.reindex(ids).to_numpy(float),
                        "unit": UNITS["pmi"],
                    }
                )
            )
    return tables.STORY_MEASURES.frame(pd.concat(frames, ignore_index=True))


@dataclass(frozen=True)
class SummarySettings:
    """What a corpus's tension summary depends on (rule ``summarize_tension``'s params,
    :func:`storyflow.plan.tension.summary_settings`): ``k`` endings per cut (``tension.k``),
    the ``intervals`` of the group means and contrasts, the corpus's ``contrasts`` (unpaired
    corpora: :func:`contrast_effects`), and the ``forecasters``, ``judges`` and ``pmi_models``
    of the story measures."""

    k: int
    intervals: Statistics
    contrasts: Sequence[Mapping[str, object]]
    forecasters: tuple[str, ...]
    judges: tuple[str, ...]
    pmi_models: tuple[str, ...]

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SummarySettings:
        """From the rule's params (its ``intervals``: the ``stats`` block's,
        :meth:`Statistics.from_params`)."""
        intervals = Statistics.from_params(params["intervals"])
        return settings_from(cls, params, where="tension", intervals=intervals)


def summarize(
    stories: str | Path,
    scores: Sequence[str | Path],
    pmi: Sequence[str | Path],
    validity_files: Sequence[str | Path],
    settings: SummarySettings,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The tension summary of a corpus (rule ``summarize_tension``), every group and contrast
    labelled with its forecaster's and judge's validity verdict.

    Args:
        stories: The corpus's stories table (:data:`tables.STORIES`: story types, and
            ``prompt_id`` when the stories are paired by prompt, as in HANNA).
        scores: The story statistics of every forecaster × judge
            (:func:`storyflow.measures.tension.curves.story_statistics`).
        pmi: The PMI tables of the scoring models (:data:`tables.TENSION_PMI`; none: no
            likelihood comparison and no PMI measure).
        validity_files: The forecasters' validity tables (:data:`tables.VALIDITY`).
        settings: K, the intervals, the contrasts and the models of the story measures.

    Returns:
        ``(groups, effects, likelihood, measures)``: :func:`group_means`,
        :func:`paired_effects` (stories with ``prompt_id``) or :func:`contrast_effects`,
        :func:`likelihood_vs_sampled` (empty without PMI) and :func:`story_measures`.
    """
    labels = tables.read(tables.STORIES, stories)
    statistics = pd.concat([pd.read_parquet(f) for f in scores], ignore_index=True)
    story_pmi_table = tables.read_all(tables.TENSION_PMI, pmi) if pmi else None
    checks = read_checks(list(validity_files))
    k, intervals = settings.k, settings.intervals
    groups = group_means(statistics, k, intervals, checks)
    if "prompt_id" in labels.columns:
        effects = paired_effects(statistics, labels, k, intervals, checks)
    else:
        effects = contrast_effects(statistics, labels, settings.contrasts, k, intervals, checks)
    likelihood = (
        likelihood_vs_sampled(statistics, story_pmi_table)
        if story_pmi_table is not None
        else tables.TENSION_LIKELIHOOD.empty()
    )
    measures = story_measures(
        labels["story_id"],
        statistics,
        story_pmi_table,
        settings.forecasters,
        settings.judges,
        settings.pmi_models,
    )
    return groups, effects, likelihood, measures
