"""Variants of the window covariates that the §5.4 refits test against the run's
(docs/regression.md, "The §5.4 variants"); none is the workflow's covariate table.

The workflow aligns every window measure backward: sentence i is compared with the w sentences
before it (:func:`compute_covariates`). *Fiction Flows*' Table C1 writes lexical overlap,
embedding similarity and tense distance on the pair (s_i, s_{i+1}) (``fiction_flows.txt``
l. 433-434, l. 443), length delta and agent continuity backward (l. 444, l. 451), and Appendix
B.1 calls the length delta absolute (l. 399). The functions below give each reading as a
covariate table of the workflow's columns, so that the regressions fit it unchanged:

- :func:`pair_table`: the three pair measures (:data:`PAIR_MEASURES`) of every sentence against
  the w sentences before it (``backward``: the workflow's values) or after it (``forward``: at
  w = 1 the pair (s_i, s_{i+1}) on row i, as Table C1 writes it), from any embeddings;
- :func:`with_columns`: a covariate table with some of its columns taken from another table;
- :func:`adjacent_pairs`: the pair measures at a window w replaced by those of the adjacent pair
  (w = 1);
- :func:`absolute_length_delta`: every length delta as its absolute value.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from storyflow.measures.sequentiality.covariates.table import ParsedSentences, pair_measures

#: The measures Table C1 defines on the pair (s_i, s_{i+1}) (:func:`pair_measures`).
PAIR_MEASURES = ("lemma_overlap", "embedding_sim", "tense_distance")
#: Which neighbours a window holds: the w sentences before the sentence, or the w after it.
DIRECTIONS = ("backward", "forward")
KEYS = ["story_id", "sentence_idx"]


def pair_columns(windows: Sequence[int]) -> list[str]:
    """``lemma_overlap_h1``, ``embedding_sim_h1``, ``tense_distance_h1``, ... per window."""
    return [f"{m}_h{w}" for w in windows for m in PAIR_MEASURES]


def _window(i: int, n: int, w: int, direction: str) -> range:
    """Positions in its story (of ``n`` sentences) of sentence i's window of w sentences."""
    if direction == "backward":
        return range(max(0, i - w), i)
    return range(i + 1, min(n, i + 1 + w))


def pair_table(
    parsed: ParsedSentences,
    embeddings: np.ndarray,
    windows: Sequence[int],
    *,
    direction: str,
) -> pd.DataFrame:
    """The pair measures of every sentence against its window (:func:`pair_measures`).

    Args:
        parsed: The parsed sentence table (:func:`parse_sentences`).
        embeddings: One unit-length row per sentence of ``parsed``, in its order.
        windows: Window sizes w (sentences of the same story).
        direction: ``backward``: the w sentences before the sentence (the workflow's columns,
            NaN on a story's first sentence); ``forward``: the w sentences after it (fewer near
            a story's end; NaN on its last sentence). At w = 1 forward, row i holds the value
            of the pair (s_i, s_{i+1}), which is row i + 1's backward value.

    Returns:
        ``story_id``, ``sentence_idx`` and :func:`pair_columns` (Jaccard 0..1, cosine -1..1,
        Jaccard distance 0..1), one row per sentence in ``parsed``'s order.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    if embeddings.shape[0] != len(parsed.measures):
        raise ValueError(
            f"{embeddings.shape[0]} embeddings for {len(parsed.measures)} parsed sentences"
        )
    rows: list[dict[str, float]] = []
    start = 0
    for n in parsed.sizes:
        for i in range(n):
            row: dict[str, float] = {}
            for w in windows:
                window = [start + j for j in _window(i, n, int(w), direction)]
                if not window:
                    row.update({f"{m}_h{w}": np.nan for m in PAIR_MEASURES})
                    continue
                values = pair_measures(
                    parsed.measures[start + i],
                    embeddings[start + i],
                    [parsed.measures[j] for j in window],
                    embeddings[window],
                )
                row.update({f"{m}_h{w}": values[m] for m in PAIR_MEASURES})
            rows.append(row)
        start += n
    table = pd.DataFrame(rows, columns=pair_columns(windows), dtype=float)
    table.insert(0, "story_id", parsed.sentences["story_id"].astype(str).to_numpy())
    table.insert(1, "sentence_idx", parsed.sentences["sentence_idx"].astype("int64").to_numpy())
    return table


def with_columns(covariates: pd.DataFrame, replacement: pd.DataFrame) -> pd.DataFrame:
    """``covariates`` with every column of ``replacement`` but the keys taken from it, matched
    on (``story_id``, ``sentence_idx``); rows and their order as in ``covariates``.

    Raises:
        ValueError: a sentence of ``covariates`` has no row in ``replacement``, or
            ``replacement`` brings a column ``covariates`` lacks.
    """
    columns = [c for c in replacement.columns if c not in KEYS]
    unknown = [c for c in columns if c not in covariates.columns]
    if unknown:
        raise ValueError(f"replacement columns {unknown} are not covariates")
    keyed = replacement.astype({"story_id": str}).set_index(KEYS)[columns]
    index = pd.MultiIndex.from_frame(covariates[KEYS].astype({"story_id": str}))
    missing = index.difference(keyed.index)
    if len(missing):
        raise ValueError(f"{len(missing)} sentences have no replacement row, e.g. {missing[0]}")
    out = covariates.copy()
    for column in columns:
        out[column] = keyed.loc[index, column].to_numpy()
    return out


def adjacent_pairs(covariates: pd.DataFrame, window: int) -> pd.DataFrame:
    """``covariates`` with the pair measures of window ``window`` (``*_h{window}``) replaced by
    those of the adjacent pair (``*_h1``); agent continuity and length delta keep their window,
    which Table C1 defines for k = 3 (l. 444, l. 451)."""
    out = covariates.copy()
    for m in PAIR_MEASURES:
        out[f"{m}_h{window}"] = covariates[f"{m}_h1"]
    return out


def absolute_length_delta(covariates: pd.DataFrame) -> pd.DataFrame:
    """``covariates`` with every ``length_delta_h{w}`` as its absolute value (tokens, >= 0:
    how far the sentence's length is from its window's mean, longer or shorter alike)."""
    out = covariates.copy()
    for column in [c for c in covariates.columns if c.startswith("length_delta_h")]:
        out[column] = covariates[column].abs()
    return out
