"""Sentence- and story-level sequentiality from the NLL table.

Notation as in ``docs/method.md`` (sections 1 and 2). For every scored sentence s_i the NLL table
holds one row per history size h; the row with ``history == "0"`` is the *base* NLL:

- formulation ``"topic"``:   NLL_T(s_i)  (topic only)        → SEQ(s_i, h)  = NLL_T − NLL_C(h)
- formulation ``"context"``: NLL_∅(s_i)  (start-of-text only) → SEQ'(s_i, h) = NLL_∅ − NLL_C∅(h)

All NLLs are means over the target sentence's tokens, in **nats/token**, so sequentiality is in
nats/token too. **Sign:** a positive value means the preceding sentences make the sentence *more*
predictable (lower NLL with context than without); a negative value means the context hurts.

The story level is the mean over *all* of the story's sentences. The first sentence has no
preceding sentence at any h (``n_history == 0``): its "context" prompt equals its base prompt, so
its sequentiality is 0 (up to floating-point noise of the scorer). It is kept in the mean, as the
story level of Sap et al. (2022) averages over all n_d sentences (*Fiction Flows*, Eq. 4), which
pulls short stories towards 0 by a factor (n − 1)/n.
"""

from __future__ import annotations

import logging

import pandas as pd

from storyflow import tables
from storyflow.history import sort_histories

log = logging.getLogger(__name__)

BASE_HISTORY = "0"
SENTENCE_KEY = ["story_id", "sentence_idx", "model", "formulation"]
STORY_KEY = ["story_id", "model", "formulation", "history"]
SENTENCE_COLUMNS = tables.SENTENCE_SEQUENTIALITY.names
STORY_COLUMNS = tables.STORY_SEQUENTIALITY.names
# |seq| of a sentence without history above this (nats/token) is reported: it should be ~0.
NO_HISTORY_TOLERANCE = 1e-3
_MAX_LISTED = 5


def _describe_rows(df: pd.DataFrame, columns: list[str]) -> str:
    """A short listing of the first rows of ``df`` (for error messages)."""
    shown = df[columns].head(_MAX_LISTED).to_dict(orient="records")
    more = f" and {len(df) - _MAX_LISTED} more" if len(df) > _MAX_LISTED else ""
    return f"{shown}{more}"


def sentence_sequentiality(nll: pd.DataFrame) -> pd.DataFrame:
    """Sentence-level sequentiality: each h ≥ 1 (or "full") row minus its h = 0 row.

    Args:
        nll: The NLL table, one row per (story_id, sentence_idx, model, formulation, history),
            with ``nll`` in nats/token (see the module docstring).

    Returns:
        One row per input row with ``history != "0"``: ``story_id, sentence_idx, model,
        formulation, history, n_history, truncated, nll_base, nll_context, seq``.
        ``nll_base`` is NLL_T (topic) or NLL_∅ (context), ``nll_context`` is NLL_C or NLL_C∅,
        and ``seq = nll_base − nll_context`` (SEQ or SEQ'), all in nats/token; positive =
        the context makes the sentence more predictable. Sorted by model, formulation, story,
        sentence and history (numeric, "full" last).

    Raises:
        ValueError: a required column is missing, a key is duplicated, or a row has no h = 0
            partner (the NLL step is expected to score h = 0 for every scored sentence).
    """
    tables.NLL.check(nll, needs=[*SENTENCE_KEY, "history", "n_history", "truncated", "nll"])
    nll = nll.astype({"history": str})
    key = [*SENTENCE_KEY, "history"]
    duplicated = nll[nll.duplicated(key, keep=False)]
    if not duplicated.empty:
        raise ValueError(
            f"NLL table has {len(duplicated)} rows with a duplicated key {key}: "
            f"{_describe_rows(duplicated, key)}"
        )

    is_base = nll["history"] == BASE_HISTORY
    base = nll.loc[is_base, [*SENTENCE_KEY, "nll"]].rename(columns={"nll": "nll_base"})
    context = nll.loc[~is_base, [*key, "n_history", "truncated", "nll"]].rename(
        columns={"nll": "nll_context"}
    )
    merged = context.merge(base, on=SENTENCE_KEY, how="left", indicator=True, validate="m:1")
    orphans = merged[merged["_merge"] == "left_only"]
    if not orphans.empty:
        raise ValueError(
            f"{len(orphans)} NLL rows have no history '0' row of the same "
            f"(story_id, sentence_idx, model, formulation): {_describe_rows(orphans, key)}"
        )

    merged["seq"] = merged["nll_base"] - merged["nll_context"]
    merged["truncated"] = merged["truncated"].astype(bool)
    off = merged[(merged["n_history"] == 0) & (merged["seq"].abs() > NO_HISTORY_TOLERANCE)]
    if not off.empty:
        log.warning(
            "%d sentences without history have |seq| > %g nats/token (expected ~0): %s",
            len(off),
            NO_HISTORY_TOLERANCE,
            _describe_rows(off, [*key, "seq"]),
        )
    return _sort(merged[SENTENCE_COLUMNS], ["model", "formulation", "story_id", "sentence_idx"])


def _story_labels(
    stories: pd.DataFrame, sentence_counts: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each story's ``story_type`` and ``n_sentences``, one row per story (a ValueError when
    a table gives a story two)."""
    types = stories[["story_id", "story_type"]].drop_duplicates()
    counts = sentence_counts[["story_id", "n_sentences"]].drop_duplicates()
    for table, name in ((types, "stories table"), (counts, "sentence counts")):
        dup = table[table["story_id"].duplicated(keep=False)]
        if not dup.empty:
            raise ValueError(
                f"{name} has conflicting rows for stories: {_describe_rows(dup, list(dup.columns))}"
            )
    return types, counts


def _check_complete(story: pd.DataFrame) -> None:
    """A ValueError when a story group has no type or sentence count, or fewer (or more)
    sentences scored (``n_scored``) than it has (``n_sentences``)."""
    unknown = story[story["story_type"].isna() | story["n_sentences"].isna()]
    if not unknown.empty:
        raise ValueError(
            f"{unknown['story_id'].nunique()} stories are missing from the stories table or the "
            f"sentence counts: {sorted(unknown['story_id'].unique())[:_MAX_LISTED]}"
        )
    incomplete = story[story["n_scored"] != story["n_sentences"]]
    if not incomplete.empty:
        raise ValueError(
            f"{len(incomplete)} story groups do not have all their sentences scored "
            f"(n_scored vs n_sentences): "
            f"{_describe_rows(incomplete, [*STORY_KEY, 'n_scored', 'n_sentences'])}"
        )


def story_sequentiality(
    sentence_seq: pd.DataFrame,
    stories: pd.DataFrame,
    sentence_counts: pd.DataFrame,
) -> pd.DataFrame:
    """Story-level sequentiality: the mean over each story's sentences.

    The mean runs over *all* sentences of the story, including the first one, whose
    sequentiality is 0 because it has no preceding sentence (see the module docstring).

    Args:
        sentence_seq: Output of :func:`sentence_sequentiality`.
        stories: The stories table (``story_id``, ``story_type``, ...).
        sentence_counts: ``story_id, story_type, n_sentences``; every story must have exactly
            ``n_sentences`` sentences in ``sentence_seq`` for each model/formulation/history.

    Returns:
        One row per (story_id, model, formulation, history): ``story_id, story_type, model,
        formulation, history, n_sentences, seq, nll_base, nll_context, any_truncated``.
        ``seq``, ``nll_base`` and ``nll_context`` are story means in nats/token (the two NLL
        means are the decomposition of ``seq``: seq = nll_base − nll_context); positive ``seq``
        = the context makes the story's sentences more predictable. ``any_truncated`` is true
        when any sentence's history was cut to fit the context window.

    Raises:
        ValueError: a story is missing from ``stories`` or ``sentence_counts``, or its number
            of sentences differs from ``n_sentences``.
    """
    tables.SENTENCE_SEQUENTIALITY.check(sentence_seq)
    tables.STORIES.check(stories, needs=["story_id", "story_type"])
    tables.SENTENCE_COUNTS.check(sentence_counts, needs=["story_id", "n_sentences"])

    grouped = sentence_seq.astype({"history": str}).groupby(STORY_KEY, sort=False)
    story = grouped.agg(
        n_scored=("sentence_idx", "nunique"),
        seq=("seq", "mean"),
        nll_base=("nll_base", "mean"),
        nll_context=("nll_context", "mean"),
        any_truncated=("truncated", "any"),
    ).reset_index()

    types, counts = _story_labels(stories, sentence_counts)
    story = story.merge(types, on="story_id", how="left").merge(counts, on="story_id", how="left")
    _check_complete(story)
    story["n_sentences"] = story["n_sentences"].astype(int)
    story["any_truncated"] = story["any_truncated"].astype(bool)
    return _sort(story[STORY_COLUMNS], ["model", "formulation", "story_type", "story_id"])


def _sort(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Sort by ``by`` then history (numeric order, "full" last); fresh index."""
    order = {label: i for i, label in enumerate(sort_histories(df["history"]))}
    return (
        df.assign(_h=df["history"].map(order))
        .sort_values([*by, "_h"], kind="stable")
        .drop(columns="_h")
        .reset_index(drop=True)
    )


SEQUENTIALITY_UNIT = "nats/token"


def story_measures(story_seq: pd.DataFrame) -> pd.DataFrame:
    """The story scores handed to the cross-measure comparison (:data:`tables.STORY_MEASURES`).

    One row per story, model and formulation: ``sequentiality.<formulation>`` = the story's mean
    sentence sequentiality with the full history (nats/token), from the story table of
    :func:`story_sequentiality` (all models concatenated).
    """
    full = story_seq[story_seq["history"] == "full"]
    return tables.STORY_MEASURES.frame(
        pd.DataFrame(
            {
                "story_id": full["story_id"],
                "model": full["model"],
                "measure": "sequentiality." + full["formulation"].astype(str),
                "value": full["seq"],
                "unit": SEQUENTIALITY_UNIT,
            }
        ).reset_index(drop=True)
    )
