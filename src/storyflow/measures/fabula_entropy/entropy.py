"""Binary entropy of pooled yes/no answers (Castricato et al. 2021, equation 3).

For a question q answered by readers r = 1..R, each reader gives p_r = P(yes) in [0, 1] (a
language model's renormalised answer probability, or a human's 0/1 answer). Entropies are in
**bits** (log base 2); h(0) = h(1) = 0 and h(0.5) = 1.

- soft pooling: P(q) = mean_r p_r and H_soft = h(P(q)). By the concavity of h it splits exactly
  into H_soft = mean_r h(p_r) + D, where mean_r h(p_r) is the readers' own uncertainty and
  D = H_soft − mean_r h(p_r) ≥ 0 (the Jensen gap, equal to the mutual information between the
  reader and the answer) is their disagreement;
- hard pooling: P(q) = share of readers with p_r > 0.5 and H_hard = h(P(q)), the analogue of
  the paper's human protocol (each reader gives one answer).

A story's index (EWC or ETC) is the mean of H over its questions of that kind.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from storyflow.errors import StoryflowError


def binary_entropy(p: float | Sequence[float] | np.ndarray) -> np.ndarray:
    """h(p) = −p log2 p − (1 − p) log2(1 − p) in bits, elementwise; 0 at p = 0 and p = 1."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = -(p * np.log2(p)) - (1 - p) * np.log2(1 - p)
    return np.where((p <= 0) | (p >= 1), 0.0, terms)


def pool(p_yes: np.ndarray) -> dict[str, np.ndarray]:
    """Pooled entropies of questions × readers probabilities ``p_yes`` (rows: questions).

    Returns arrays over questions (bits): ``soft`` = h(mean p), ``hard`` = h(share p > 0.5),
    ``reader_entropy`` = mean of h(p_r), ``disagreement`` = soft − reader_entropy (≥ 0 up to
    rounding), and ``p_soft``, ``p_hard`` (the pooled P(yes)).
    """
    p = np.asarray(p_yes, dtype=float)
    if p.ndim != 2 or p.shape[1] == 0:
        raise ValueError(f"p_yes must be questions × readers with at least one reader: {p.shape}")
    p_soft = p.mean(axis=1)
    p_hard = (p > 0.5).mean(axis=1)
    soft = binary_entropy(p_soft)
    own = binary_entropy(p).mean(axis=1)
    return {
        "p_soft": p_soft,
        "p_hard": p_hard,
        "soft": soft,
        "hard": binary_entropy(p_hard),
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
