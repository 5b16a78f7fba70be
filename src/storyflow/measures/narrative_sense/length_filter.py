"""The short-set filter of the narrative-sense threshold (Roemmele et al.).

The paper compares stories of equal length (each cut to 150 tokens) and leaves out every story
written for a prompt when any story for that prompt is shorter than 150 tokens. A corpus whose
lemma table has a prompt column (HANNA's ``prompt_id``) is filtered by prompt set; in any other
corpus each story is a set of its own (a story shorter than the minimum is left out alone).
Left-out stories are still scored (their pair scores feed the figures' neighbours, the comparison
and the regressions) but not tested, and each is listed with its reason.
"""

from __future__ import annotations

import pandas as pd

#: Columns of the exclusions table :func:`short_sets` returns.
EXCLUSION_COLUMNS = ("story_id", "group", "set_id", "n_words", "reason")
#: The lemma-table column that names a story's prompt set, when the corpus has one.
SET_COLUMN = "prompt_id"


def short_sets(lemmas: pd.DataFrame, min_tokens: int | None) -> pd.DataFrame:
    """The stories left out because they, or a story of their prompt set, are too short.

    ``lemmas``: a lemma table before any cut, whose ``n_words`` is each story's full length in
    tokens; ``min_tokens``: the shortest story length kept (None: nobody is left out). A story
    is left out when its set holds a story with ``n_words < min_tokens``; the set is the
    story's ``prompt_id`` when the table has one, else the story alone. Returns
    :data:`EXCLUSION_COLUMNS`: story_id, group, set_id (the prompt set, or the story's id),
    n_words (the story's own length) and reason (in words: which story of the set is short and
    by how much), in the table's row order.
    """
    if min_tokens is None or lemmas.empty:
        return pd.DataFrame(columns=list(EXCLUSION_COLUMNS))
    frame = lemmas[["story_id", "group", "n_words"]].reset_index(drop=True)
    by_set = SET_COLUMN in lemmas
    keys = lemmas[SET_COLUMN] if by_set else lemmas["story_id"]
    frame["set_id"] = keys.astype(str).to_numpy()
    short = frame[frame["n_words"] < min_tokens]
    if by_set:
        named: dict[str, list[str]] = {}
        for row in short.itertuples(index=False):
            named.setdefault(row.set_id, []).append(f"{row.story_id} has {row.n_words}")
        why = {
            k: f"prompt set {k}: {', '.join(v)} tokens (< {min_tokens})" for k, v in named.items()
        }
    else:
        why = {
            row.set_id: f"{row.n_words} tokens (< {min_tokens})"
            for row in short.itertuples(index=False)
        }
    out = frame[frame["set_id"].isin(why)].copy()
    out["reason"] = out["set_id"].map(why)
    return out[list(EXCLUSION_COLUMNS)].reset_index(drop=True)
