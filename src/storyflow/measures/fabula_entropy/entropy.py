"""Binary entropy of pooled yes/no answers (Castricato et al. 2021, equation 3).

For a question q answered by readers r = 1..R, each reader gives p_r = P(yes) in [0, 1] (a
language model's renormalised answer probability, or a human's 0/1 answer). Entropies are in
**bits** (log base 2); h(0) = h(1) = 0 and h(0.5) = 1.

- soft pooling: P(q) = mean_r p_r and H_soft = h(P(q)). By the concavity of h it splits exactly
  into H_soft = mean_r h(p_r) + D, where mean_r h(p_r) is the readers' own uncertainty and
  D = H_soft − mean_r h(p_r) ≥ 0 (the Jensen gap, equal to the mutual information between the
  reader and the answer) is their disagreement;
- hard pooling, the paper's estimator (its eq. 2-3: the share of a finite population of readers
  answering yes, then its entropy): each reader gives yes/no answers and H_hard = h(share of
  yes). ``samples`` says how a model reader answers: ``None``, once, with its more probable
  answer (yes when p_r > 0.5); an integer S, S times, each answer yes with probability p_r (a
  reader who guesses in proportion to its belief, as the paper's readers of an incoherent
  story guess), and H_hard is then the *expected* entropy of the share of yes among the R × S
  answers (exact: the number of yes is a sum of binomials), with no sampling noise. As S
  grows it tends to the soft index; with one reader and S = None it is 0 on every question.

A story's index (EWC or ETC) is the mean of H over its questions of that kind (eq. 3).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import binom

from storyflow.errors import StoryflowError


def binary_entropy(p: float | Sequence[float] | np.ndarray) -> np.ndarray:
    """h(p) = −p log2 p − (1 − p) log2(1 − p) in bits, elementwise; 0 at p = 0 and p = 1."""
    q = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = -(q * np.log2(q)) - (1 - q) * np.log2(1 - q)
    return np.where((q <= 0) | (q >= 1), 0.0, terms)


def sampled_hard(p_yes: np.ndarray, samples: int) -> np.ndarray:
    """The expected hard entropy per question (bits) when each of the R readers (columns of
    ``p_yes``, questions × readers) answers ``samples`` times, each answer yes with probability
    p_r: E[h(K / (R × samples))] with K, the number of yes, a sum of independent
    Binomial(samples, p_r) (its distribution computed exactly, one reader at a time)."""
    p = np.clip(np.asarray(p_yes, dtype=float), 0.0, 1.0)
    if samples < 1:
        raise ValueError(f"samples must be at least 1: {samples}")
    k = np.arange(samples + 1)
    dist = np.ones((p.shape[0], 1))
    for r in range(p.shape[1]):
        one = binom.pmf(k[None, :], samples, p[:, r : r + 1])
        new = np.zeros((p.shape[0], dist.shape[1] + samples))
        for j in range(samples + 1):
            new[:, j : j + dist.shape[1]] += dist * one[:, j : j + 1]
        dist = new
    n = dist.shape[1] - 1
    return dist @ binary_entropy(np.arange(n + 1) / n)


def pool(p_yes: np.ndarray, samples: int | None) -> dict[str, np.ndarray]:
    """Pooled entropies of questions × readers probabilities ``p_yes`` (rows: questions).

    Returns arrays over questions (bits): ``soft`` = h(mean p), ``hard`` = h(share p > 0.5)
    (``samples`` None: one answer per reader, its more probable one) or its expectation over
    ``samples`` answers per reader drawn from p (:func:`sampled_hard`), ``reader_entropy`` =
    mean of h(p_r), ``disagreement`` = soft − reader_entropy (≥ 0 up to rounding), and
    ``p_soft``, ``p_hard`` (the pooled P(yes); with ``samples``, the expected share = p_soft).
    """
    p = np.asarray(p_yes, dtype=float)
    if p.ndim != 2 or p.shape[1] == 0:
        raise ValueError(f"p_yes must be questions × readers with at least one reader: {p.shape}")
    p_soft = p.mean(axis=1)
    soft = binary_entropy(p_soft)
    own = binary_entropy(p).mean(axis=1)
    if samples is None:
        p_hard = (p > 0.5).mean(axis=1)
        hard = binary_entropy(p_hard)
    else:
        p_hard, hard = p_soft, sampled_hard(p, samples)
    return {
        "p_soft": p_soft,
        "p_hard": p_hard,
        "soft": soft,
        "hard": hard,
        "reader_entropy": own,
        "disagreement": soft - own,
    }


HUMAN_COLUMNS = ("story_id", "version", "question_id", "participant", "answer")


def human_p_yes(answers: pd.DataFrame, source: str = "human answers") -> pd.DataFrame:
    """P(yes) per (story_id, version, question_id) from human yes/no answers.

    ``answers`` has :data:`HUMAN_COLUMNS`; ``answer`` is yes/no (any case; also true/false,
    1/0). Each participant is one reader whose p is 0 or 1, so the soft and the hard pooled P
    are both the share of yes. The paper's between-subjects rule is checked: a participant
    who answered about two versions of one story stops with a message naming them.

    Returns story_id, version, question_id, p_yes (share of yes), n_readers.
    """
    missing = [c for c in HUMAN_COLUMNS if c not in answers.columns]
    if missing:
        raise StoryflowError(
            f"{source}: missing columns {missing}; found {list(answers.columns)}. "
            f"A human-answer CSV has the columns {', '.join(HUMAN_COLUMNS)}."
        )
    words = answers["answer"].astype(str).str.strip().str.lower()
    yes = words.isin({"yes", "true", "1", "y"})
    no = words.isin({"no", "false", "0", "n"})
    bad = answers.index[~(yes | no)]
    if len(bad):
        rows = ", ".join(str(i + 2) for i in bad[:5])
        raise StoryflowError(
            f"{source}: answers must be yes or no; rows {rows} (header = 1) hold "
            f"{sorted(set(answers.loc[bad, 'answer'].astype(str)))[:5]}"
        )
    frame = answers.assign(yes=yes.astype(float))
    seen = frame.groupby(["story_id", "participant"])["version"].nunique()
    both = seen[seen > 1]
    if len(both):
        pairs = ", ".join(f"{p} (story {s})" for s, p in list(both.index)[:5])
        raise StoryflowError(
            f"{source}: the between-subjects rule is broken: participants saw more than one "
            f"version of a story: {pairs}. Each participant may read one version per story."
        )
    grouped = frame.groupby(["story_id", "version", "question_id"], sort=True)["yes"]
    return grouped.agg(p_yes="mean", n_readers="size").reset_index()
