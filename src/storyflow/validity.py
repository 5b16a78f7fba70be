"""Validity checks: can a model do the job a measure gives it? (docs/validity.md)

A measure's number describes the story only when the model behind it does its role: a reader
that says "yes" to every question, a forecaster whose endings are no nearer the true ending
than a wrong one, a judge that calls everything a match, a detector that flags every story.
Each such role is checked on items with *known* answers, in the same run and before the
results that rest on it; every check is one row of :data:`storyflow.tables.VALIDITY`, and a
model passes a role when all its checks pass. Results resting on a failed role stay in the
tables, labelled, and out of pooled indices and headline figures.

This module holds what every check shares: the statistics (ROC AUC, balanced accuracy, Wilson
and bootstrap intervals, which stay inside the statistic's range), the row builder, the
verdicts and their summary in words. The checks themselves live with their measures.

Units: shares, accuracies and AUCs are in [0, 1]; 0.5 is chance for a balanced accuracy, a
pairwise accuracy and an AUC.

The verdict vocabulary here is read whenever the workflow parses (the plan's measure records
name each measure's verdict rule), so the two statistics that need scipy import it when they
run: a parse, and every cluster job's, stays free of scipy's half second.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from storyflow import tables

#: The three verdicts on a story measure computed with a model (a measure's verdict rule,
#: :attr:`storyflow.plan.registry.Measure.verdict`): its scores describe the stories, the model
#: (it failed a check of its role), or rest on nothing a check covers.
VALID, FAILED, NOT_CHECKED = "valid", "failed", "not checked"
#: A measure's verdict rule: (validity table, corpus, story measure, model) → (verdict, the failed
#: checks in words, '' unless failed); a measure computed with no model ('') never reaches it.
VerdictRule = Callable[[pd.DataFrame, str, str, str], tuple[str, str]]

#: How a check's value decides: the value itself reaches the threshold, or the lower end of its
#: confidence interval is above it (the statistic is better than the threshold beyond doubt).
RULES = ("value >= threshold", "ci_low > threshold")


def roc_auc(scores: Sequence[float] | np.ndarray, truth: Sequence[int] | np.ndarray) -> float:
    """ROC AUC of ``scores`` for binary ``truth`` (1 = positive): the probability that a random
    positive scores above a random negative, ties counting half (Mann–Whitney U / (n₁ n₀));
    NaN when a class is missing."""
    s, t = np.asarray(scores, float), np.asarray(truth)
    pos, neg = s[t == 1], s[t == 0]
    if len(pos) == 0 or len(neg) == 0:
        return math.nan
    from scipy import stats as sps

    return float(sps.mannwhitneyu(pos, neg).statistic / (len(pos) * len(neg)))


def balanced_accuracy(
    said: Sequence[bool] | np.ndarray, truth: Sequence[int] | np.ndarray
) -> float:
    """Mean of the true-positive and the true-negative rate of the binary decisions ``said``
    (0.5 for a model that always says the same; NaN when a class is missing)."""
    d, t = np.asarray(said, bool), np.asarray(truth).astype(bool)
    if t.all() or not t.any():
        return math.nan
    return float((d[t].mean() + (~d[~t]).mean()) / 2)


def wilson_interval(successes: int, n: int, confidence: float) -> tuple[float, float]:
    """Wilson score interval of a share ``successes / n`` (inside [0, 1]; NaN for n = 0)."""
    if n == 0:
        return math.nan, math.nan
    from scipy import stats as sps

    ci = sps.binomtest(int(successes), int(n)).proportion_ci(confidence, method="wilson")
    return float(ci.low), float(ci.high)


def decide(value: float, ci_low: float, threshold: float, rule: str) -> bool:
    """Whether a check passes under ``rule`` (:data:`RULES`); a NaN statistic never passes."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; use one of {RULES}")
    if rule == RULES[0]:
        return bool(not math.isnan(value) and value >= threshold)
    return bool(not math.isnan(ci_low) and ci_low > threshold)


def check(
    *,
    measure: str,
    corpus: str,
    role: str,
    model: str,
    name: str,
    value: float,
    ci: tuple[float, float],
    threshold: float,
    rule: str,
    n: int,
    detail: str,
) -> dict[str, Any]:
    """One :data:`storyflow.tables.VALIDITY` row (a record by column name), its verdict
    decided by :func:`decide`: ``name`` is the check's, ``value`` its statistic with the
    interval ``ci`` (at the run's ``stats.confidence``), ``threshold`` what ``rule`` compares
    them with, ``n`` the items it rests on, ``detail`` the check in words."""
    passed = decide(float(value), float(ci[0]), float(threshold), rule)
    return tables.VALIDITY.row(
        measure=measure,
        corpus=corpus,
        role=role,
        model=model,
        check=name,
        value=float(value),
        ci_low=float(ci[0]),
        ci_high=float(ci[1]),
        threshold=float(threshold),
        rule=rule,
        n=int(n),
        passed=passed,
        detail=detail,
    )


def frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows of :func:`check` as the validity table."""
    return tables.VALIDITY.frame(rows)


ROLE_KEYS = ["measure", "corpus", "role", "model"]
#: The corpus of a check that holds for every corpus (the plot-hole detectors' checks on their
#: validation pool): said without a corpus.
EVERY_CORPUS = "all"


def verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """One row per measure × corpus × role × model: ``passed`` when every check passed, and
    ``failed`` the names of the checks that did not."""
    if table.empty:
        return pd.DataFrame(columns=[*ROLE_KEYS, "passed", "failed"])
    grouped = table.groupby(ROLE_KEYS, sort=False)
    out = grouped["passed"].all().rename("passed").reset_index()
    failed = grouped.apply(
        lambda g: ", ".join(g.loc[~g["passed"], "check"]), include_groups=False
    ).rename("failed")
    return out.merge(failed.reset_index(), on=ROLE_KEYS)


#: Each check in words, by its name (the part before ``[``: a judge's checks name the
#: forecaster whose endings they rest on in brackets), for a reader of the report.
CHECK_WORDS = {
    "control_auc": "its ROC AUC on the control questions",
    "balanced_accuracy": "its balanced accuracy on items with known answers",
    "balanced_accuracy_vs_chance": "its balanced accuracy on items with known answers",
    "pairwise_accuracy": "its share of pairs ranked the right way",
    "auroc": "its AUROC on flawed against original stories",
    "ceeval_minus_always_no": "its CEEval-Full gain over always answering no",
    "pairs": "the controlled pairs it was checked on",
    "min_group_size": "the smaller group's stories",
}


def check_in_words(row: Mapping[str, Any]) -> str:
    """A failed check as a reader needs it (a :data:`storyflow.tables.VALIDITY` row): what was
    measured, its value and what it missed, e.g. "its balanced accuracy on items with known
    answers (held-out forecasts of smollm2), 0.55, is below 0.6"."""
    name, _, about = str(row["check"]).partition("[")
    what = CHECK_WORDS.get(name, name.replace("_", " "))
    if about:
        what += f" (on {about.rstrip(']')}'s forecasts)"
    value, low, threshold = float(row["value"]), float(row["ci_low"]), float(row["threshold"])
    if math.isnan(value):
        return f"{what} could not be computed"
    shown = f"{value:.0f}" if value == int(value) and value > 1 else f"{value:.2f}"
    if row["rule"] == RULES[1]:
        if math.isnan(low):
            return f"{what}, {shown}, has no interval to clear {threshold:g}"
        return (
            f"{what}, {shown}, is not above {threshold:g} beyond doubt (its interval starts "
            f"at {low:.2f})"
        )
    return f"{what}, {shown}, is below {threshold:g}"


def describe(table: pd.DataFrame) -> list[str]:
    """The validity table in words, one sentence per measure and role, each corpus's verdict
    said apart (a model may pass on one corpus and fail on another), and each failed check in
    words (:func:`check_in_words`), e.g. "fabula entropy: 1 of 1 reader valid on rocstories
    (qwen); 0 of 1 on hippocorpus (failed: qwen: its balanced accuracy on items with known
    answers, 0.64, is below 0.7)". Corpora with the same verdicts are said together."""
    lines = []
    judged = verdicts(table)
    failures = table[~table["passed"].astype(bool)]
    for (measure, role), group in judged.groupby(["measure", "role"], sort=False):
        models = list(dict.fromkeys(group["model"]))
        noun = role if len(models) == 1 else f"{role}s"
        said: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
        for corpus, rows in group.groupby("corpus", sort=False):
            good = tuple(rows.loc[rows["passed"], "model"])
            bad = []
            for model in rows.loc[~rows["passed"].astype(bool), "model"]:
                mine = failures[
                    (failures["measure"] == measure)
                    & (failures["corpus"] == corpus)
                    & (failures["role"] == role)
                    & (failures["model"] == model)
                ]
                words = "; ".join(check_in_words(r) for r in mine.to_dict("records"))
                bad.append(f"{model}: {words}")
            said.setdefault((good, tuple(bad)), []).append(str(corpus))
        parts: list[str] = []
        for (good, failed), corpora in said.items():
            text = f"{len(good)} of {len(good) + len(failed)}"
            text += f" {noun} valid" if not parts else ""
            where = [c for c in corpora if c != EVERY_CORPUS]
            text += f" on {', '.join(where)}" if where else ""
            text += f" ({', '.join(good)})" if good else ""
            text += f" (failed: {'; '.join(failed)})" if failed else ""
            parts.append(text)
        lines.append(f"{str(measure).replace('_', ' ')}: {'; '.join(parts)}")
    return lines


def brief(table: pd.DataFrame) -> list[str]:
    """Which models passed their checks, one line per measure, each role's models together,
    e.g. "tension: forecaster smollm2 valid; judge embedding failed, qwen valid" (a model's
    corpora said where its verdicts differ: "valid on rocstories, failed on hippocorpus"): the
    report's first page, whose checks in words (:func:`describe`) are in the Validity
    category."""
    lines = []
    for measure, mine in verdicts(table).groupby("measure", sort=False):
        roles = []
        for role, of_role in mine.groupby("role", sort=False):
            said = []
            for model, rows in of_role.groupby("model", sort=False):
                corpora: dict[str, list[str]] = {}
                for passed, corpus in zip(rows["passed"], rows["corpus"], strict=True):
                    word = "valid" if passed else "failed"
                    corpora.setdefault(word, []).append(str(corpus))
                verdict = (
                    next(iter(corpora))
                    if len(corpora) == 1
                    else ", ".join(f"{word} on {', '.join(on)}" for word, on in corpora.items())
                )
                said.append(f"{model} {verdict}")
            roles.append(f"{role} {', '.join(said)}")
        lines.append(f"{str(measure).replace('_', ' ')}: {'; '.join(roles)}")
    return lines


def summary_of(path: str) -> dict[str, list[str]]:
    """The validity table at ``path`` in words for the report: ``brief`` (:func:`brief`, its
    first page) and ``checks`` (:func:`describe`, the Validity category); both [] when the
    table does not exist yet."""
    from pathlib import Path

    if not Path(path).is_file():
        return {"brief": [], "checks": []}
    table = tables.read(tables.VALIDITY, path)
    return {"brief": brief(table), "checks": describe(table)}


def gather(tables_: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Every measure's validity rows in one table (:data:`storyflow.tables.VALIDITY`), in the
    order given; a repeated (measure, corpus, role, model, check) is an error."""
    from storyflow.errors import StoryflowError

    table = tables.VALIDITY.frame(pd.concat(list(tables_), ignore_index=True))
    repeated = table.duplicated(list(tables.VALIDITY.key))
    if repeated.any():
        row = table[repeated].iloc[0]
        raise StoryflowError(
            f"validity check {row['check']!r} of {row['measure']} {row['role']} {row['model']} "
            f"on {row['corpus']} is written twice"
        )
    return table
