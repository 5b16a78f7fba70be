"""From answers to results: the comprehension gate, story indices, original vs corrupted.

- :func:`reader_gate`: each reader's ROC AUC on the control questions (P(yes) against the known
  answer; 0.5 = chance, 1 = every true control above every false one); readers below
  ``min_auc`` are reported but kept out of the headline pool;
- :func:`reader_pools`: the reader sets results are computed for: each reader alone, each model
  (its prompt variants), ``pooled`` (the readers that passed the gate) and ``all``;
- :func:`story_indices`: EWC / ETC per story version and pool (bits; :mod:`.entropy`);
- :func:`compare_versions`: original vs each corrupted condition, paired by story;
- :func:`dose_response`: the mean index against the number of corruptions k;
- :func:`story_measures`: the original stories' indices as the cross-measure long table.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.measures.fabula_entropy.entropy import binary_entropy, human_p_yes, pool
from storyflow.stats import hedges_g

log = logging.getLogger(__name__)

MEASURES = ("soft", "hard")
INDEX_KINDS = ("ewc", "etc")


def auc(p: np.ndarray, truth: np.ndarray) -> float:
    """ROC AUC of scores ``p`` for binary ``truth`` (Mann–Whitney U / (n₁ n₀)); NaN when a
    class is missing."""
    pos, neg = p[truth == 1], p[truth == 0]
    if len(pos) == 0 or len(neg) == 0:
        return math.nan
    return float(sps.mannwhitneyu(pos, neg).statistic / (len(pos) * len(neg)))


def reader_gate(answers: pd.DataFrame, questions: pd.DataFrame, min_auc: float) -> pd.DataFrame:
    """:data:`tables.FEI_READERS`: the comprehension AUC of every reader and whether it passes."""
    controls = questions[questions["kind"] == "control"]
    merged = answers.merge(controls, on=["story_id", "version", "question_id"])
    rows = []
    for reader, mine in answers.groupby("reader", sort=True):
        c = merged[merged["reader"] == reader]
        p, truth = c["p_yes"].to_numpy(), c["truth"].to_numpy()
        word = c["template"].str.startswith("word").to_numpy()
        score = auc(p, truth)
        rows.append(
            (
                reader,
                mine["model"].iloc[0],
                mine["variant"].iloc[0],
                len(c),
                score,
                auc(p[word], truth[word]),
                auc(p[~word], truth[~word]),
                bool(score >= min_auc),
                float(mine["mass"].mean()),
                float(mine["low_mass"].mean()),
                float((mine["p_yes"] > 0.5).mean()),
            )
        )
    table = tables.FEI_READERS.frame(rows)
    for r in table.itertuples():
        log.info(
            "reader %s: control AUC %.3f (word %.3f, order %.3f) over %d controls: %s",
            r.reader,
            r.auc,
            r.auc_word,
            r.auc_order,
            r.n_controls,
            "passed" if r.passed else f"below {min_auc}, out of the headline",
        )
    return table


def reader_pools(readers: pd.DataFrame) -> list[tuple[str, list[str], bool]]:
    """(pool name, its readers, whether all passed the gate) for every pool results are given
    for; ``pooled`` is left out when no reader passed (logged)."""
    passed = dict(zip(readers["reader"], readers["passed"], strict=True))
    pools = [(r, [r], passed[r]) for r in readers["reader"]]
    for model, group in readers.groupby("model", sort=False):
        if len(group) > 1:
            members = list(group["reader"])
            pools.append((model, members, all(passed[r] for r in members)))
    gated = [r for r, ok in passed.items() if ok]
    if gated:
        pools.append(("pooled", gated, True))
    else:
        log.warning("no reader passed the comprehension gate: no 'pooled' (headline) results")
    pools.append(("all", list(passed), all(passed.values())))
    return pools


def _story_means(per_q: pd.DataFrame) -> pd.DataFrame:
    """Per story, version and kind: the number of questions and the mean of each per-question
    entropy (soft, hard, reader_entropy, disagreement; bits)."""
    return (
        per_q.groupby(["story_id", "version", "kind"], sort=False)
        .agg(
            n_questions=("soft", "size"),
            soft=("soft", "mean"),
            hard=("hard", "mean"),
            reader_entropy=("reader_entropy", "mean"),
            disagreement=("disagreement", "mean"),
        )
        .reset_index()
    )


def story_indices(
    answers: pd.DataFrame,
    questions: pd.DataFrame,
    versions: pd.DataFrame,
    pools: Sequence[tuple[str, list[str], bool]],
) -> pd.DataFrame:
    """:data:`tables.FEI_STORY_INDICES`: each pool's EWC / ETC per story version (bits)."""
    asked = questions[questions["kind"].isin(INDEX_KINDS)][
        ["story_id", "version", "question_id", "kind"]
    ]
    wide = answers.pivot_table(
        index=["story_id", "version", "question_id"], columns="reader", values="p_yes"
    ).reset_index()
    wide = asked.merge(wide, on=["story_id", "version", "question_id"], how="inner")
    labels = versions[["story_id", "version", "condition", "k"]]
    frames = []
    for name, members, gated in pools:
        cols = [m for m in members if m in wide.columns]
        part = wide.dropna(subset=cols)
        if part.empty or not cols:
            continue
        pooled = pool(part[cols].to_numpy())
        per_q = part[["story_id", "version", "kind"]].assign(
            **{k: pooled[k] for k in ("soft", "hard", "reader_entropy", "disagreement")}
        )
        story = (
            _story_means(per_q)
            .merge(labels, on=["story_id", "version"])
            .assign(pool=name, readers=",".join(cols), gated=gated)
        )
        frames.append(story)
    if not frames:
        return tables.FEI_STORY_INDICES.empty()
    return tables.FEI_STORY_INDICES.frame(pd.concat(frames, ignore_index=True))


def human_indices(
    humans: pd.DataFrame, questions: pd.DataFrame, versions: pd.DataFrame, source: str
) -> pd.DataFrame:
    """:data:`tables.FEI_STORY_INDICES` rows of pool ``human`` from human yes/no answers.

    ``humans``: story_id, version, question_id, participant, answer (one row per answer; the
    question ids and versions of ``questions``). Each participant is a certain reader (p = 0 or
    1), so per question soft = hard = h(share of yes), the readers' own entropy is 0 and the
    disagreement equals the entropy (:func:`.entropy.human_p_yes` checks the between-subjects
    rule).
    """
    p = human_p_yes(humans.astype({"story_id": str, "version": str, "question_id": str}), source)
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
    per_q = merged[["story_id", "version", "kind"]].assign(
        soft=h, hard=h, reader_entropy=0.0, disagreement=h
    )
    n = int(p["n_readers"].sum())
    story = (
        _story_means(per_q)
        .merge(versions[["story_id", "version", "condition", "k"]], on=["story_id", "version"])
        .assign(pool="human", readers=f"human ({n} answers)", gated=True)
    )
    return tables.FEI_STORY_INDICES.frame(story)


def mean_ci(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Mean and t-based CI (NaN bounds when fewer than 2 values or no spread)."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if len(x) < 2 or x.std(ddof=1) == 0:
        return mean, math.nan, math.nan
    low, high = sps.t.interval(confidence, len(x) - 1, loc=mean, scale=sps.sem(x))
    return mean, float(low), float(high)


def compare_versions(indices: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """:data:`tables.FEI_COMPARISON`: each corrupted condition against the original, paired by
    story (stories with both versions only)."""
    rows = []
    keys = ["pool", "readers", "gated", "kind"]
    for (pool_name, readers, gated, kind), group in indices.groupby(keys, sort=False):
        original = group[group["version"] == "original"].set_index("story_id")
        for version, corrupted in group[group["version"] != "original"].groupby("version"):
            corrupted = corrupted.set_index("story_id")
            both = original.index.intersection(corrupted.index)
            for measure in MEASURES:
                a = corrupted.loc[both, measure].to_numpy(float)
                b = original.loc[both, measure].to_numpy(float)
                d = a - b
                n = len(both)
                wil = sps.wilcoxon(d).pvalue if n >= 2 and np.any(d != 0) else math.nan
                g = hedges_g(a, b, confidence) if n >= 2 else (math.nan,) * 3
                rows.append(
                    (
                        pool_name,
                        readers,
                        gated,
                        kind,
                        version,
                        measure,
                        n,
                        *mean_ci(b, confidence),
                        *mean_ci(a, confidence),
                        *mean_ci(d, confidence),
                        float(wil),
                        *g,
                    )
                )
    return tables.FEI_COMPARISON.frame(rows)


def dose_response(indices: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """:data:`tables.FEI_DOSE`: mean index per pool, kind, measure and k (0 = original).

    Only conditions that vary k in steps (antonym swaps, shuffles) enter; the wrong ending is a
    condition of its own (in the comparison table).
    """
    steps = indices[indices["condition"] != "wrong_ending"]
    rows = []
    for (pool_name, kind, k), group in steps.groupby(["pool", "kind", "k"], sort=True):
        for measure in MEASURES:
            rows.append(
                (
                    pool_name,
                    kind,
                    int(k),
                    measure,
                    len(group),
                    *mean_ci(group[measure].to_numpy(float), confidence),
                )
            )
    return tables.FEI_DOSE.frame(rows)


def story_measures(
    indices: pd.DataFrame, story_ids: Sequence[str], kinds: Sequence[str], readers: pd.DataFrame
) -> pd.DataFrame:
    """The original stories' indices as :data:`tables.STORY_MEASURES` rows: for every story of
    the corpus × model (each model's prompt variants pooled, or its one reader; "pooled" for
    the gated readers; "human" for human answers) × measure
    ``fabula_entropy.<kind>_<soft|hard>``, in bits; NaN where the story got no questions of
    that kind (the exclusion table says why)."""
    models = list(dict.fromkeys(readers["model"]))
    pool_of = {}
    for model in models:
        mine = list(readers.loc[readers["model"] == model, "reader"])
        pool_of[model] = model if len(mine) > 1 else mine[0]
    for extra in ("pooled", "human"):
        if extra in set(indices["pool"]):
            pool_of[extra] = extra
    original = indices[indices["version"] == "original"].set_index(["pool", "kind", "story_id"])
    rows = []
    for sid in story_ids:
        for label, pool_name in pool_of.items():
            for kind in kinds:
                for measure in MEASURES:
                    key = (pool_name, kind, sid)
                    value = original.at[key, measure] if key in original.index else math.nan
                    rows.append(
                        (sid, label, f"fabula_entropy.{kind}_{measure}", float(value), "bits")
                    )
    return tables.STORY_MEASURES.frame(rows)


def summarize(
    stories: pd.DataFrame,
    versions: pd.DataFrame,
    questions: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    kinds: Sequence[str],
    min_auc: float,
    confidence: float,
    humans: pd.DataFrame | None = None,
    humans_source: str = "human answers",
) -> dict[str, pd.DataFrame]:
    """Every result table of a corpus: ``readers`` (gate), ``indices``, ``comparison``,
    ``dose`` and ``measures`` (the cross-measure long table). ``humans``: optional human
    answers (:func:`human_indices`), pool ``human`` beside the models' pools."""
    readers = reader_gate(answers, questions, min_auc)
    pools = reader_pools(readers)
    indices = story_indices(answers, questions, versions, pools)
    if humans is not None:
        extra = human_indices(humans, questions, versions, humans_source)
        indices = tables.FEI_STORY_INDICES.frame(pd.concat([indices, extra], ignore_index=True))
    comparison = compare_versions(indices, confidence)
    for r in comparison[comparison["pool"] == "pooled"].itertuples():
        log.info(
            "pooled (%s) %s %s %s: original %.3f, corrupted %.3f bits, diff %.3f "
            "[%.3f, %.3f], Wilcoxon p %.3g, g %.2f (n %d)",
            r.readers,
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
        )
    return {
        "readers": readers,
        "indices": indices,
        "comparison": comparison,
        "dose": dose_response(indices, confidence),
        "measures": story_measures(indices, list(stories["story_id"].astype(str)), kinds, readers),
    }
