"""From answers to results: the readers' validity check, story indices, original vs corrupted.

- :func:`reader_checks`: each reader's validity check on the control questions (known answers):
  ROC AUC of P(yes) against the truth and balanced accuracy of its yes/no at P(yes) > 0.5, each
  with a percentile bootstrap interval over stories, against ``validity.reader``'s thresholds;
  on the calibrated P(yes) when calibration is on. A reader that says "yes" to everything can
  rank well (AUC) but has a balanced accuracy of 0.5 and fails;
- :func:`reader_pools`: the reader sets results are computed for: each reader alone, each model
  (its prompt variants), ``pooled`` (the readers that passed: the headline pool) and ``all``;
  each with its population (answers per question: readers × ``samples``) and a note saying what
  limits it (one answer per question: hard entropy 0 on every question; one reader sampled:
  its own uncertainty, no disagreement between readers; readers that failed);
- :func:`question_entropies`: hard and soft entropy per question and pool (bits;
  :mod:`.entropy`); :func:`story_indices`: their means per story version (EWC / ETC);
- :func:`compare_versions`: original vs each corrupted version, paired by story (the original
  read over the corrupted version's passages), bootstrap CIs, Wilcoxon, Hedges' g; groups
  smaller than ``stats.min_group_size`` keep n and the means with their intervals, untested;
- :func:`version_means`: the mean index per version (k = 0 original; the dose-response);
- :func:`story_measures`: the original stories' indices as the cross-measure long table.

Hard pooling (the share of the readers' answers that are yes, then its entropy) is the paper's
definition; soft pooling (the entropy of the mean P(yes)) is its limit for a population of
readers who answer by sampling, and mixes each reader's own uncertainty into it. Which one is
the *headline* is the config's ``fabula_entropy.headline`` (:class:`IndexSettings`); the
tables mark its rows (``headline``) on the headline pool (``pooled``, else ``all``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from storyflow import tables, validity
from storyflow.bootstrap import Statistics
from storyflow.errors import StoryflowError
from storyflow.measures.fabula_entropy.entropy import binary_entropy, human_p_yes, pool
from storyflow.measures.fabula_entropy.verdict import MEASURE
from storyflow.settings import FromParams
from storyflow.stats import hedges_g

log = logging.getLogger(__name__)

#: The two indices of a pool of readers, the paper's (hard) first (bits).
INDICES = ("hard", "soft")
ENTROPIES = ("hard", "soft", "reader_entropy", "disagreement")
INDEX_KINDS = ("ewc", "etc")
ROLE = "reader"
ONE_READER = "one reader: a single yes/no per question, so its hard entropy is 0 on every question"
SAMPLED_ONE = (
    "one reader whose answers are sampled: its hard index is that reader's own uncertainty, "
    "not a disagreement between readers"
)
HEADLINE_POOLS = ("pooled", "all")


@dataclass(frozen=True)
class IndexSettings(FromParams):
    """How the index is read (config ``fabula_entropy``): ``headline``, the measure the tables
    and figures lead with (``hard`` or ``soft``); ``samples``, answers per model reader for the
    hard index (None: one, its more probable answer; S: S answers drawn from its P(yes),
    :func:`.entropy.sampled_hard`)."""

    WHERE = "fabula_entropy"

    headline: str
    samples: int | None


def headline_pool(names: Sequence[str]) -> str:
    """The pool the headline rests on: ``pooled`` (the valid readers) when there is one, else
    ``all`` (every reader; its rows say they are not valid)."""
    return next((n for n in HEADLINE_POOLS if n in names), "all")


@dataclass(frozen=True)
class Pool:
    """A set of readers results are computed for: its ``name``, its ``readers``, whether every
    one of them passed the validity check (``valid``), a ``note`` in words ("" if none) and its
    ``population``: the answers per question its hard index rests on (readers × samples; for
    human answers, the mean number of participants per question)."""

    name: str
    readers: tuple[str, ...]
    valid: bool
    note: str = ""
    label: str = ""
    population: int = 0

    @property
    def listed(self) -> str:
        """The readers as the tables list them."""
        return self.label or ",".join(self.readers)

    def columns(self) -> dict[str, Any]:
        """The pool's columns of the story-index and comparison tables, by name."""
        return {
            "pool": self.name,
            "readers": self.listed,
            "n_readers": len(self.readers),
            "population": self.population,
            "valid": self.valid,
            "note": self.note,
        }


# --- the readers' validity check -------------------------------------------------------------


def _controls(answers: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    controls = questions[questions["kind"] == "control"]
    return answers.merge(
        controls[["story_id", "version", "question_id", "template", "truth"]],
        on=["story_id", "version", "question_id"],
    )


def _by_story(part: pd.DataFrame, column: str) -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (g[column].to_numpy(float), g["truth"].to_numpy(int))
        for _, g in part.groupby("story_id", sort=True)
    ]


def _pooled_stat(
    statistic: Callable[[np.ndarray, np.ndarray], float],
) -> Callable[[Sequence[tuple[np.ndarray, np.ndarray]]], float]:
    def apply(units: Sequence[tuple[np.ndarray, np.ndarray]]) -> float:
        p = np.concatenate([u[0] for u in units])
        truth = np.concatenate([u[1] for u in units])
        return statistic(p, truth)

    return apply


def _auc(p: np.ndarray, truth: np.ndarray) -> float:
    return validity.roc_auc(p, truth)


def _balanced(p: np.ndarray, truth: np.ndarray) -> float:
    return validity.balanced_accuracy(p > 0.5, truth)


def reader_checks(
    answers: pd.DataFrame,
    questions: pd.DataFrame,
    thresholds: Mapping[str, float],
    stats: Statistics,
    *,
    corpus: str,
    calibration: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:data:`tables.FEI_READERS` and the :data:`tables.VALIDITY` rows of every reader.

    Checks (measure ``fabula_entropy``, role ``reader``, model = the reader ``model/variant``):
    ``control_auc`` (ROC AUC of P(yes) on the controls, >= ``thresholds["min_auc"]``) and
    ``balanced_accuracy`` (of P(yes) > 0.5, >= ``thresholds["min_balanced_accuracy"]``), each
    with a percentile bootstrap CI over stories (a story's controls resampled together); the
    detail gives the accuracy's parts with Wilson intervals. ``calibration``: the
    fabula_entropy.calibration the answers were read with (P(yes) is calibrated unless
    ``none``; the raw statistics are kept beside).
    """
    merged = _controls(answers, questions)
    p_name = f"calibrated P(yes) ({calibration} prior)" if calibration != "none" else "P(yes)"
    rows, checks = [], []
    for reader, mine in answers.groupby("reader", sort=True):
        row, found = _reader_check(
            str(reader), mine, merged[merged["reader"] == reader], thresholds, stats,
            corpus=corpus, p_name=p_name,
        )  # fmt: skip
        rows.append(row)
        checks += found
    table = tables.FEI_READERS.frame(rows)
    _log_readers(table, corpus)
    return table, validity.frame(checks)


def _control_intervals(c: pd.DataFrame, stats: Statistics) -> dict[str, tuple[float, float]]:
    """The percentile bootstrap intervals of a reader's control AUC (``auc``) and balanced
    accuracy (``balanced``) over stories (a story's controls resampled together)."""
    units = _by_story(c, "p_yes")
    return {
        name: stats.units_interval(units, _pooled_stat(stat))
        for name, stat in (("auc", _auc), ("balanced", _balanced))
    }


def _yes_no_parts(said: np.ndarray, truth: np.ndarray, confidence: float) -> str:
    """The balanced accuracy's parts, in words: the true controls said yes to and the false
    ones said no to, each with its Wilson interval (shares)."""
    tp, n_pos = int((said & (truth == 1)).sum()), int((truth == 1).sum())
    tn, n_neg = int((~said & (truth == 0)).sum()), int((truth == 0).sum())
    tpr_ci = validity.wilson_interval(tp, n_pos, confidence)
    tnr_ci = validity.wilson_interval(tn, n_neg, confidence)
    return (
        f"yes to {tp} of {n_pos} true (Wilson [{tpr_ci[0]:.2f}, {tpr_ci[1]:.2f}]), "
        f"no to {tn} of {n_neg} false (Wilson [{tnr_ci[0]:.2f}, {tnr_ci[1]:.2f}])"
    )


def _reader_check(
    reader: str,
    mine: pd.DataFrame,
    c: pd.DataFrame,
    thresholds: Mapping[str, float],
    stats: Statistics,
    *,
    corpus: str,
    p_name: str,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One reader's :data:`tables.FEI_READERS` record and its two validity checks, from its
    answers (``mine``) and its answers to the controls with their truth (``c``).

    Long because the reader's control statistics (AUC, balanced accuracy, their intervals and
    raw values: shares) feed both its two validity checks and its record, each written out
    field by field; the intervals and the accuracy's parts are :func:`_control_intervals` and
    :func:`_yes_no_parts`."""
    p, truth = c["p_yes"].to_numpy(float), c["truth"].to_numpy(int)
    word = c["template"].str.startswith("word").to_numpy()
    ci = _control_intervals(c, stats)
    auc, balanced = _auc(p, truth), _balanced(p, truth)
    raw = c["p_yes_raw"].to_numpy(float)
    auc_raw, balanced_raw = _auc(raw, truth), _balanced(raw, truth)
    said = p > 0.5
    n_stories = int(c["story_id"].nunique())
    items = (
        f"{len(c)} control questions of {n_stories} stories (word present or absent, line "
        f"order; known answers)"
    )
    common: dict[str, Any] = {
        "measure": MEASURE,
        "corpus": corpus,
        "role": ROLE,
        "model": reader,
        "n": len(c),
    }
    checks = [
        validity.check(
            **common,
            name="control_auc",
            value=auc,
            ci=ci["auc"],
            threshold=float(thresholds["min_auc"]),
            rule=validity.RULES[0],
            detail=(
                f"ROC AUC of the {p_name} on {items}; {stats.confidence:.0%} bootstrap CI over "
                f"stories; before calibration {auc_raw:.3f}"
            ),
        ),
        validity.check(
            **common,
            name="balanced_accuracy",
            value=balanced,
            ci=ci["balanced"],
            threshold=float(thresholds["min_balanced_accuracy"]),
            rule=validity.RULES[0],
            detail=(
                f"balanced accuracy of {p_name} > 0.5 on {items}: "
                f"{_yes_no_parts(said, truth, stats.confidence)}; "
                f"before calibration {balanced_raw:.3f}"
            ),
        ),
    ]
    failed = [r["check"] for r in checks if not r["passed"]]
    row = tables.FEI_READERS.row(
        reader=reader, model=mine["model"].iloc[0], variant=mine["variant"].iloc[0],
        n_stories=n_stories, n_controls=len(c),
        auc=auc, auc_ci_low=ci["auc"][0], auc_ci_high=ci["auc"][1],
        balanced_accuracy=balanced, balanced_accuracy_ci_low=ci["balanced"][0],
        balanced_accuracy_ci_high=ci["balanced"][1],
        auc_word=_auc(p[word], truth[word]), auc_order=_auc(p[~word], truth[~word]),
        auc_raw=auc_raw, balanced_accuracy_raw=balanced_raw,
        share_yes_controls=float(said.mean()) if len(said) else math.nan,
        passed=not failed, failed=", ".join(failed),
        mean_mass=float(mine["mass"].mean()), share_low_mass=float(mine["low_mass"].mean()),
        share_yes=float((mine["p_yes"] > 0.5).mean()),
    )  # fmt: skip
    return row, checks


def _log_readers(table: pd.DataFrame, corpus: str) -> None:
    """Each reader's checks in the job's log (:data:`tables.FEI_READERS` rows)."""
    for r in table.itertuples():
        log.info(
            "reader %s on %s: control AUC %.3f [%.3f, %.3f], balanced accuracy %.3f [%.3f, %.3f] "
            "(raw %.3f, %.3f; yes to %.0f%% of controls) over %d controls: %s",
            r.reader,
            corpus,
            r.auc,
            r.auc_ci_low,
            r.auc_ci_high,
            r.balanced_accuracy,
            r.balanced_accuracy_ci_low,
            r.balanced_accuracy_ci_high,
            r.auc_raw,
            r.balanced_accuracy_raw,
            100 * r.share_yes_controls,
            r.n_controls,
            "valid" if r.passed else f"failed ({r.failed}): out of the pooled results",
        )


def reader_pools(readers: pd.DataFrame, samples: int | None) -> list[Pool]:
    """Every pool results are given for: each reader, each model with several readers, ``pooled``
    (the readers that passed; left out, with a warning, when none did) and ``all``; each with its
    population, readers × ``samples`` (one answer each when ``samples`` is None)."""
    passed = dict(zip(readers["reader"], readers["passed"], strict=True))

    def make(name: str, members: Sequence[str]) -> Pool:
        failed = [r for r in members if not passed[r]]
        population = len(members) * (samples or 1)
        notes = []
        if population == 1:
            notes.append(ONE_READER)
        elif len(members) == 1:
            notes.append(SAMPLED_ONE)
        if failed:
            notes.append(f"rests on readers that failed the validity check: {', '.join(failed)}")
        return Pool(name, tuple(members), not failed, "; ".join(notes), population=population)

    pools = [make(r, [r]) for r in readers["reader"]]
    for model, group in readers.groupby("model", sort=False):
        if len(group) > 1:
            pools.append(make(str(model), list(group["reader"])))
    valid = [r for r, ok in passed.items() if ok]
    if valid:
        pools.append(make("pooled", valid))
        if len(valid) == 1:
            log.warning(
                "pooled results rest on one valid reader (%s): %s",
                valid[0],
                ONE_READER if not samples or samples == 1 else SAMPLED_ONE,
            )
    else:
        log.warning("no reader passed the validity check: no 'pooled' (headline) results")
    pools.append(make("all", list(passed)))
    return pools


# --- entropies per question and story --------------------------------------------------------


def question_entropies(
    answers: pd.DataFrame,
    questions: pd.DataFrame,
    pools: Sequence[Pool],
    samples: int | None,
) -> pd.DataFrame:
    """Per pool and EWC/ETC question: ``hard``, ``soft``, ``reader_entropy`` and
    ``disagreement`` (bits; :func:`.entropy.pool`, ``samples`` answers per reader for the hard
    index), with the question's story, version, passage and kind. A question enters a pool when
    every reader of the pool answered it."""
    asked = questions[questions["kind"].isin(INDEX_KINDS)][
        ["story_id", "version", "passage", "question_id", "kind"]
    ]
    wide = answers.pivot_table(
        index=["story_id", "version", "question_id"], columns="reader", values="p_yes"
    ).reset_index()
    wide = asked.merge(wide, on=["story_id", "version", "question_id"], how="inner")
    frames = []
    for p in pools:
        cols = [m for m in p.readers if m in wide.columns]
        if len(cols) < len(p.readers):
            continue
        part = wide.dropna(subset=cols)
        if part.empty:
            continue
        pooled = pool(part[cols].to_numpy(), samples)
        frames.append(
            part[["story_id", "version", "passage", "question_id", "kind"]].assign(
                pool=p.name, **{k: pooled[k] for k in ENTROPIES}
            )
        )
    if not frames:
        return pd.DataFrame(
            columns=["story_id", "version", "passage", "question_id", "kind", "pool", *ENTROPIES]
        )
    return pd.concat(frames, ignore_index=True)


def _labels(versions: pd.DataFrame) -> pd.DataFrame:
    return versions[["story_id", "version", "condition", "k"]].drop_duplicates(
        ["story_id", "version"]
    )


def story_indices(
    per_question: pd.DataFrame, versions: pd.DataFrame, pools: Sequence[Pool]
) -> pd.DataFrame:
    """:data:`tables.FEI_STORY_INDICES`: each pool's EWC / ETC per story version (bits), the
    mean over the version's questions of that kind (all its passages)."""
    if per_question.empty:
        return tables.FEI_STORY_INDICES.empty()
    story = (
        per_question.groupby(["pool", "story_id", "version", "kind"], sort=False)
        .agg(
            n_passages=("passage", "nunique"),
            n_questions=("hard", "size"),
            **{k: (k, "mean") for k in ENTROPIES},
        )
        .reset_index()
        .merge(_labels(versions), on=["story_id", "version"])
    )
    info = pd.DataFrame([p.columns() for p in pools])
    return tables.FEI_STORY_INDICES.frame(story.merge(info, on="pool"))


def human_entropies(
    humans: pd.DataFrame, questions: pd.DataFrame, source: str
) -> tuple[pd.DataFrame, Pool]:
    """Per-question entropies of pool ``human`` from human yes/no answers, and the pool (its
    readers: the participants).

    ``humans``: story_id, version, question_id, participant, answer (one row per answer; the
    question ids and versions of ``questions``). Each participant is a certain reader (p = 0 or
    1), so per question soft = hard = h(share of yes), the readers' own entropy is 0 and the
    disagreement equals the entropy (:func:`.entropy.human_p_yes` checks the between-subjects
    rule).
    """
    frame = humans.astype({"story_id": str, "version": str, "question_id": str})
    p = human_p_yes(frame, source)
    asked = questions[questions["kind"].isin(INDEX_KINDS)]
    merged = p.merge(asked, on=["story_id", "version", "question_id"], how="left")
    unknown = merged[merged["kind"].isna()]
    if len(unknown):
        listed = ", ".join(
            f"{r.story_id}/{r.version}/{r.question_id}" for r in unknown.head(5).itertuples()
        )
        raise StoryflowError(
            f"{source}: {len(unknown)} answered question(s) are not EWC/ETC questions of this "
            f"corpus (questions.parquet), e.g. {listed}; use its story_id, version and "
            "question_id"
        )
    h = binary_entropy(merged["p_yes"].to_numpy())
    per_q = merged[["story_id", "version", "passage", "question_id", "kind"]].assign(
        pool="human", hard=h, soft=h, reader_entropy=0.0, disagreement=h
    )
    n = int(p["n_readers"].sum())
    people = tuple(sorted(frame["participant"].astype(str).unique()))
    population = round(float(p["n_readers"].mean()))
    return per_q, Pool("human", people, True, "", f"human ({n} answers)", population)


# --- original vs corrupted, means per version --------------------------------------------------


def _paired(per_question: pd.DataFrame) -> pd.DataFrame:
    """Per pool, kind, corrupted version and story: the index of the corrupted version and of
    the original over the same passages (bits, hard and soft)."""
    keys = ["pool", "kind", "story_id", "version", "passage"]
    sums = (
        per_question.groupby(keys, sort=False)
        .agg(n=("hard", "size"), hard=("hard", "sum"), soft=("soft", "sum"))
        .reset_index()
    )
    original = sums[sums["version"] == "original"].drop(columns="version")
    corrupted = sums[sums["version"] != "original"]
    both = corrupted.merge(
        original, on=["pool", "kind", "story_id", "passage"], suffixes=("_c", "_o")
    )
    story = both.groupby(["pool", "kind", "version", "story_id"], sort=False).sum(numeric_only=True)
    out = pd.DataFrame(index=story.index)
    for m in INDICES:
        out[f"{m}_corrupted"] = story[f"{m}_c"] / story["n_c"]
        out[f"{m}_original"] = story[f"{m}_o"] / story["n_o"]
    return out.reset_index()


def compare_versions(
    per_question: pd.DataFrame, pools: Sequence[Pool], stats: Statistics, headline: str
) -> pd.DataFrame:
    """:data:`tables.FEI_COMPARISON`: each corrupted version against the original, paired by
    story (stories with both; the original read over the corrupted version's passages);
    ``headline`` marks the rows of the ``headline`` measure on the headline pool."""
    info = {p.name: p for p in pools}
    lead = headline_pool(list(info))
    rows = []
    paired = _paired(per_question) if not per_question.empty else pd.DataFrame()
    if paired.empty:
        return tables.FEI_COMPARISON.empty()
    for (pool_name, kind, version), group in paired.groupby(
        ["pool", "kind", "version"], sort=False
    ):
        p = info[pool_name]
        for measure in INDICES:
            a = group[f"{measure}_corrupted"].to_numpy(float)
            b = group[f"{measure}_original"].to_numpy(float)
            d = a - b
            n = len(d)
            tested = n >= stats.min_group_size
            wil = sps.wilcoxon(d).pvalue if tested and np.any(d != 0) else math.nan
            g, g_low, g_high = hedges_g(a, b, stats.confidence) if tested else (math.nan,) * 3
            diff, diff_low, diff_high = (
                stats.mean_ci(d) if tested else (float(d.mean()), math.nan, math.nan)
            )
            mean_o, low_o, high_o = stats.mean_ci(b)
            mean_c, low_c, high_c = stats.mean_ci(a)
            rows.append(
                tables.FEI_COMPARISON.row(
                    **p.columns(),
                    kind=kind,
                    condition=version,
                    measure=measure,
                    headline=pool_name == lead and measure == headline,
                    n=n,
                    tested=tested,
                    mean_original=mean_o,
                    ci_low_original=low_o,
                    ci_high_original=high_o,
                    mean_corrupted=mean_c,
                    ci_low_corrupted=low_c,
                    ci_high_corrupted=high_c,
                    diff=diff,
                    diff_ci_low=diff_low,
                    diff_ci_high=diff_high,
                    wilcoxon_p=float(wil),
                    g=g,
                    g_ci_low=g_low,
                    g_ci_high=g_high,
                )
            )
    return tables.FEI_COMPARISON.frame(rows)


def version_means(indices: pd.DataFrame, stats: Statistics, headline: str) -> pd.DataFrame:
    """:data:`tables.FEI_DOSE`: the mean index per pool, kind, version and measure with its
    bootstrap CI over stories (k = 0: the original; the dose-response over k); ``headline``
    marks the ``headline`` measure's rows on the headline pool."""
    rows = []
    keys = ["pool", "valid", "n_readers", "population", "kind", "version", "condition", "k"]
    lead = headline_pool(list(indices["pool"].unique()))
    for key, group in indices.groupby(keys, sort=False):
        named = dict(zip(keys, key, strict=True))
        for measure in INDICES:
            values = group[measure].to_numpy(float)
            mean, low, high = stats.mean_ci(values)
            rows.append(
                tables.FEI_DOSE.row(
                    **named,
                    measure=measure,
                    headline=named["pool"] == lead and measure == headline,
                    n=len(values),
                    small_group=len(values) < stats.min_group_size,
                    mean=mean,
                    ci_low=low,
                    ci_high=high,
                )
            )
    table = tables.FEI_DOSE.frame(rows)
    return table.sort_values(["pool", "kind", "k", "version", "measure"], kind="stable")


def story_measures(
    indices: pd.DataFrame,
    story_ids: Sequence[str],
    kinds: Sequence[str],
    readers: pd.DataFrame,
    pools: Sequence[Pool],
) -> pd.DataFrame:
    """The original stories' indices as :data:`tables.STORY_MEASURES` rows: for every story of
    the corpus × model (each model's prompt variants pooled, or its one reader), ``pooled``
    (the valid readers, only when there are two or more: with one it would repeat that reader)
    and ``human`` (human answers) × measure ``fabula_entropy.<kind>_<hard|soft>``, in bits.
    NaN where the story got no questions of that kind (the exclusion table says why), and the
    hard index of a pool of one answer per question (0 on every question by construction:
    :data:`ONE_READER`).
    """
    info = {p.name: p for p in pools}
    labels: dict[str, str] = {}
    for model in dict.fromkeys(readers["model"]):
        mine = list(readers.loc[readers["model"] == model, "reader"])
        labels[str(model)] = str(model) if len(mine) > 1 else mine[0]
    if "pooled" in info and len(info["pooled"].readers) >= 2:
        labels["pooled"] = "pooled"
    if "human" in info:
        labels["human"] = "human"
    original = indices[indices["version"] == "original"].set_index(["pool", "kind", "story_id"])
    rows = []
    for sid in story_ids:
        for label, pool_name in labels.items():
            single = info[pool_name].population < 2
            for kind in kinds:
                for measure in INDICES:
                    key = (pool_name, kind, sid)
                    value = original.at[key, measure] if key in original.index else math.nan
                    if measure == "hard" and single:
                        value = math.nan
                    rows.append(
                        tables.STORY_MEASURES.row(
                            story_id=sid,
                            model=label,
                            measure=f"fabula_entropy.{kind}_{measure}",
                            value=float(value),
                            unit="bits",
                        )
                    )
    return tables.STORY_MEASURES.frame(rows)


def _log_headline(comparison: pd.DataFrame) -> None:
    """The headline comparisons of original and corrupted versions in the job's log (means and
    difference in bits, its interval, Wilcoxon p and Hedges' g)."""
    for r in comparison[comparison["headline"]].itertuples():
        log.info(
            "headline, %s (%s; %d answers per question) %s %s %s: original %.3f, corrupted "
            "%.3f bits, diff %.3f [%.3f, %.3f], Wilcoxon p %.3g, g %.2f (n %d)%s",
            r.pool,
            r.readers,
            r.population,
            r.kind,
            r.condition,
            r.measure,
            r.mean_original,
            r.mean_corrupted,
            r.diff,
            r.diff_ci_low,
            r.diff_ci_high,
            r.wilcoxon_p,
            r.g,
            r.n,
            f"; {r.note}" if r.note else "",
        )


def summarize(
    stories: pd.DataFrame,
    versions: pd.DataFrame,
    questions: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    corpus: str,
    kinds: Sequence[str],
    thresholds: Mapping[str, float],
    calibration: str,
    statistics: Mapping[str, Any],
    index: Mapping[str, Any],
    humans: pd.DataFrame | None = None,
    humans_source: str = "human answers",
) -> dict[str, pd.DataFrame]:
    """Every result table of a corpus: ``validity`` (the readers' checks, decided first),
    ``readers``, ``indices``, ``comparison``, ``dose`` (means per version) and ``measures``
    (the cross-measure long table). ``thresholds``: validity.reader; ``statistics``:
    confidence, bootstrap, seed, min_group_size (:class:`Statistics`); ``index``: headline and
    samples (:class:`IndexSettings`); ``humans``: optional human answers, pool ``human`` beside
    the models' pools."""
    stats = Statistics.from_params(statistics)
    reading = IndexSettings.from_params(index)
    readers, checks = reader_checks(
        answers, questions, thresholds, stats, corpus=corpus, calibration=calibration
    )
    pools = reader_pools(readers, reading.samples)
    per_question = question_entropies(answers, questions, pools, reading.samples)
    if humans is not None:
        extra, human_pool = human_entropies(humans, questions, humans_source)
        per_question = pd.concat([per_question, extra], ignore_index=True)
        pools = [*pools, human_pool]
    indices = story_indices(per_question, versions, pools)
    comparison = compare_versions(per_question, pools, stats, reading.headline)
    _log_headline(comparison)
    return {
        "validity": checks,
        "readers": readers,
        "indices": indices,
        "comparison": comparison,
        "dose": version_means(indices, stats, reading.headline),
        "measures": story_measures(
            indices, list(stories["story_id"].astype(str)), kinds, readers, pools
        ),
    }
