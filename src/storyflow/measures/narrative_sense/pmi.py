"""Narrative-sense relations: story-level PMI of content-word pairs (Roemmele et al.).

Steps (``docs/narrative_sense.md`` gives every choice):

1. :func:`lemmatize` turns each story into its ordered content lemmas with their token positions.
   A *token* is a spaCy token that is not whitespace and, unless punctuation is counted
   (``count_punctuation``, the paper's count), not punctuation either; positions count tokens
   from 0. Kept lemmas: lowercased, alphabetic, not a stop word, not number-like, part of speech
   not in :data:`DROPPED_POS`.
2. :func:`count_pairs` counts, over the reference stories, in how many stories each lemma
   occurs and in how many stories each pair of vocabulary lemmas co-occurs. A pair counts for a
   story only when some occurrence of w1 and some occurrence of w2 are at least 3 token
   positions apart (co-occurrence inside one trigram does not count). PMI(w1, w2) =
   log(c12 / (c1 c2)), counts in stories, natural log; the constant log N is omitted, so values
   are negative and only comparisons matter.
3. :func:`score_stories`: a story's unique in-vocabulary lemmas, all C(n, 2) pairs, each pair's
   PMI (unseen pairs get the table minimum, the *floor*).

The random story and the threshold test: :mod:`~storyflow.measures.narrative_sense.threshold`;
the filter of short prompt sets: :mod:`~storyflow.measures.narrative_sense.length_filter`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.progress import LoggedBar

if TYPE_CHECKING:
    from spacy.language import Language

log = logging.getLogger(__name__)

#: Parts of speech whose tokens never count as content words.
DROPPED_POS = frozenset({"PUNCT", "SYM", "NUM", "PROPN", "SPACE", "X"})
#: Columns of the story tables the readers return.
STORY_COLUMNS = tuple(tables.NS_STORIES.names)
#: Columns of the lemma tables :func:`lemmatize` returns.
LEMMA_COLUMNS = tuple(tables.LEMMAS.names)
#: Two occurrences less than this many token positions apart lie inside one trigram.
TRIGRAM_SPAN = 3
_PIPES_NOT_NEEDED = ("parser", "ner", "senter")


# ----------------------------------------------------------------------------- readers


# ----------------------------------------------------------------------------- lemmas


def load_lemmatizer(name: str) -> Language:
    """spaCy pipeline ``name`` with only what lemmas need (tagger, attribute ruler, lemmatizer)."""
    from storyflow.sentences import load_spacy

    nlp = load_spacy(name, exclude=("parser", "ner"))
    for pipe in _PIPES_NOT_NEEDED:
        if pipe in nlp.pipe_names:
            nlp.disable_pipe(pipe)
    return nlp


def content_lemmas(
    doc: Iterable[Any], max_tokens: int | None = None, *, count_punctuation: bool
) -> tuple[int, list[str], list[int]]:
    """``(n_words, lemmas, positions)`` of a spaCy doc, truncated to ``max_tokens`` tokens.

    A token is a spaCy token that is not whitespace and, when ``count_punctuation`` is false,
    not punctuation. ``n_words``: tokens kept (all of the doc's when ``max_tokens`` is None);
    ``lemmas``: lowercased content lemmas in text order; ``positions``: each lemma's 0-based
    token position.
    """
    lemmas, positions, n = [], [], 0
    for token in doc:
        if token.is_space or (token.is_punct and not count_punctuation):
            continue
        if max_tokens is not None and n >= max_tokens:
            break
        lemma = token.lemma_.lower()
        if not (
            token.is_stop
            or token.like_num
            or token.is_punct
            or token.pos_ in DROPPED_POS
            or not lemma.isalpha()
        ):
            lemmas.append(lemma)
            positions.append(n)
        n += 1
    return n, lemmas, positions


def lemmatize(
    stories: pd.DataFrame,
    nlp: Language,
    max_tokens: int | None = None,
    batch_size: int = 64,
    *,
    count_punctuation: bool,
) -> pd.DataFrame:
    """:data:`LEMMA_COLUMNS` for each story (plus any extra columns of ``stories``).

    ``n_words`` is the story's token count (:func:`content_lemmas`; before any cut unless
    ``max_tokens`` is given).
    """
    texts = (" ".join(str(t).split()) for t in stories["text"])
    out = [
        content_lemmas(doc, max_tokens, count_punctuation=count_punctuation)
        for doc in LoggedBar(
            nlp.pipe(texts, batch_size=batch_size), total=len(stories), desc="lemmas", mininterval=5
        )
    ]
    table = stories.drop(columns="text").reset_index(drop=True)
    table["n_words"] = np.array([n_words for n_words, _, _ in out], dtype=np.int64)
    table["lemmas"] = [lemmas for _, lemmas, _ in out]
    table["positions"] = [positions for _, _, positions in out]
    return table


def select_groups(stories: pd.DataFrame, groups: Sequence[str] | None) -> pd.DataFrame:
    """The stories of ``groups`` only (None: all), e.g. the fiction passages of the books.

    A group that no story has is a mistake in ``narrative_sense.books_reference.genres``.
    """
    if groups is None:
        return stories
    missing = sorted(set(groups) - set(stories["group"]))
    if missing:
        raise StoryflowError(
            f"narrative_sense.books_reference.genres: no passage of genre {', '.join(missing)} "
            f"(the manifest's genres: {', '.join(sorted(set(stories['group'])))}); fix the list"
        )
    return stories[stories["group"].isin(groups)].reset_index(drop=True)


def truncate(lemmas: pd.DataFrame, max_tokens: int | None) -> pd.DataFrame:
    """Keep each story's lemmas at token positions < ``max_tokens``; cap ``n_words`` likewise.

    ``max_tokens`` None: the table unchanged (a copy).
    """
    if max_tokens is None:
        return lemmas.copy()
    out = lemmas.copy()
    kept = [np.asarray(p) < max_tokens for p in out["positions"]]
    out["lemmas"] = [
        list(np.asarray(lm, dtype=object)[k]) for lm, k in zip(out["lemmas"], kept, strict=False)
    ]
    out["positions"] = [
        list(np.asarray(p, dtype=np.int64)[k]) for p, k in zip(out["positions"], kept, strict=False)
    ]
    out["n_words"] = np.minimum(out["n_words"].to_numpy(), max_tokens)
    return out


# ----------------------------------------------------------------------------- PMI table


@dataclass(frozen=True)
class PairTable:
    """Vocabulary and PMI of co-occurring pairs.

    ``vocabulary``: lemma (sorted), id (0..V-1), n_stories (reference stories holding it).
    ``pairs``: id1 < id2, n_stories (stories where the pair co-occurs outside one trigram), pmi
    (natural log, see module docstring), sorted by code = id1 * V + id2.
    ``floor``: the minimum PMI of the table, given to unseen pairs.
    """

    vocabulary: pd.DataFrame
    pairs: pd.DataFrame

    @cached_property
    def floor(self) -> float:
        return float(self.pairs["pmi"].min()) if len(self.pairs) else 0.0

    @cached_property
    def values(self) -> np.ndarray:
        """The pairs' PMI as an array (same order as :attr:`codes`)."""
        return self.pairs["pmi"].to_numpy(np.float64)

    @cached_property
    def codes(self) -> np.ndarray:
        v = len(self.vocabulary)
        return self.pairs["id1"].to_numpy(np.int64) * v + self.pairs["id2"].to_numpy(np.int64)

    def save(self, pairs_path: str | Path, vocabulary_path: str | Path) -> None:
        self.pairs.to_parquet(pairs_path, index=False)
        self.vocabulary.to_parquet(vocabulary_path, index=False)

    @classmethod
    def load(cls, pairs_path: str | Path, vocabulary_path: str | Path) -> PairTable:
        return cls(pd.read_parquet(vocabulary_path), pd.read_parquet(pairs_path))


def _story_spans(
    lemmas: Sequence[str], positions: Sequence[int], index: pd.Index
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique in-vocabulary ids (sorted) with each one's first and last position."""
    frame = pd.DataFrame({"id": index.get_indexer(list(lemmas)), "pos": np.asarray(positions)})
    frame = frame[frame["id"] >= 0]
    spans = frame.groupby("id")["pos"].agg(["min", "max"])
    return spans.index.to_numpy(np.int64), spans["min"].to_numpy(), spans["max"].to_numpy()


def story_pair_codes(ids: np.ndarray, first: np.ndarray, last: np.ndarray, v: int) -> np.ndarray:
    """Codes i*V+j (i < j) of the story's pairs that co-occur outside one trigram.

    A pair is excluded iff every occurrence of a is within 2 positions of every occurrence of b,
    i.e. max(last_a - first_b, last_b - first_a) < :data:`TRIGRAM_SPAN`.
    """
    a, b = np.triu_indices(len(ids), 1)
    spread = np.maximum(last[a] - first[b], last[b] - first[a])
    keep = spread >= TRIGRAM_SPAN
    return ids[a[keep]] * v + ids[b[keep]]


def count_pairs(lemmas: pd.DataFrame, min_stories: int, chunk: int = 500) -> PairTable:
    """The :class:`PairTable` of the reference stories ``lemmas`` (:data:`LEMMA_COLUMNS`)."""
    story_sets = [sorted(set(s)) for s in lemmas["lemmas"]]
    lemma_counts = pd.Series([w for s in story_sets for w in s]).value_counts()
    kept = lemma_counts[lemma_counts >= min_stories].sort_index()
    vocabulary = pd.DataFrame(
        {"lemma": kept.index.astype(str), "id": np.arange(len(kept)), "n_stories": kept.to_numpy()}
    )
    v = len(vocabulary)
    index = pd.Index(vocabulary["lemma"])
    codes_acc: list[np.ndarray] = []
    counts_acc: list[np.ndarray] = []
    buffer: list[np.ndarray] = []

    def flush() -> None:
        if buffer:
            codes, counts = np.unique(np.concatenate(buffer), return_counts=True)
            codes_acc.append(codes)
            counts_acc.append(counts)
            buffer.clear()

    for k, (lm, pos) in enumerate(
        LoggedBar(
            zip(lemmas["lemmas"], lemmas["positions"], strict=False),
            total=len(lemmas),
            desc="pairs",
            mininterval=5,
        )
    ):
        ids, first, last = _story_spans(lm, pos, index)
        buffer.append(story_pair_codes(ids, first, last, v))
        if (k + 1) % chunk == 0:
            flush()
    flush()
    if codes_acc:
        all_codes = np.concatenate(codes_acc)
        codes, inverse = np.unique(all_codes, return_inverse=True)
        counts = np.bincount(inverse, weights=np.concatenate(counts_acc)).astype(np.int64)
    else:
        codes, counts = np.zeros(0, np.int64), np.zeros(0, np.int64)
    id1, id2 = codes // v, codes % v
    n = vocabulary["n_stories"].to_numpy(np.float64)
    pmi = np.log(counts / (n[id1] * n[id2]))
    pairs = pd.DataFrame(
        {"id1": id1.astype(np.int32), "id2": id2.astype(np.int32), "n_stories": counts, "pmi": pmi}
    )
    log.info("PMI table: %d lemmas, %d pairs from %d stories", v, len(pairs), len(lemmas))
    return PairTable(vocabulary, pairs)


# ----------------------------------------------------------------------------- scoring


def pair_scores(
    ids: np.ndarray, table: PairTable, codes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """PMI of all pairs of the unique vocabulary ids ``ids`` and whether each pair was seen."""
    codes = table.codes if codes is None else codes
    ids = np.unique(ids)
    a, b = np.triu_indices(len(ids), 1)
    wanted = ids[a] * len(table.vocabulary) + ids[b]
    where = np.minimum(np.searchsorted(codes, wanted), max(len(codes) - 1, 0))
    seen = (codes[where] == wanted) if len(codes) else np.zeros(len(wanted), bool)
    pmi = np.where(seen, table.values[where] if len(codes) else 0.0, table.floor)
    return pmi, seen


def score_stories(lemmas: pd.DataFrame, table: PairTable, top_pairs: int) -> pd.DataFrame:
    """Per story: its pair scores and their summary.

    Columns: story_id, group, n_words (tokens after the cut), n_lemmas (unique in-vocabulary
    lemmas), n_pairs (= C(n_lemmas, 2)), seen_share (share of pairs in the table, 0..1), median_pmi
    (median PMI of all pairs), median_pmi_top (median of the ``top_pairs`` highest), pair_pmi
    (all pair scores, descending, float32) and ids (the story's vocabulary ids).
    """
    index = pd.Index(table.vocabulary["lemma"])
    codes = table.codes
    rows = []
    for lm in lemmas["lemmas"]:
        ids = np.unique(index.get_indexer(list(lm)))
        ids = ids[ids >= 0]
        pmi, seen = pair_scores(ids, table, codes)
        pmi = np.sort(pmi)[::-1]
        rows.append(
            (
                len(ids),
                len(pmi),
                float(seen.mean()) if len(pmi) else np.nan,
                float(np.median(pmi)) if len(pmi) else np.nan,
                float(np.median(pmi[:top_pairs])) if len(pmi) else np.nan,
                pmi.astype(np.float32),
                ids.astype(np.int32),
            )
        )
    out = lemmas[["story_id", "group", "n_words"]].reset_index(drop=True)
    names = ["n_lemmas", "n_pairs", "seen_share", "median_pmi", "median_pmi_top", "pair_pmi", "ids"]
    for k, name in enumerate(names):
        out[name] = [r[k] for r in rows]
    return out


def story_measures(scores: pd.DataFrame) -> pd.DataFrame:
    """The story scores handed to the cross-measure comparison (:data:`tables.STORY_MEASURES`).

    Per story (no model): ``narrative_sense.median_pmi`` and ``narrative_sense.median_pmi_top``
    (median PMI of all the story's lemma pairs and of its ``top_pairs`` highest, in nats, PMI
    without the constant ln N, docs/narrative_sense.md), from :func:`score_stories`'s table.
    """
    long = scores[["story_id", "median_pmi", "median_pmi_top"]].melt(
        id_vars="story_id",
        value_vars=["median_pmi", "median_pmi_top"],
        var_name="measure",
        value_name="value",
    )
    long["measure"] = "narrative_sense." + long["measure"]
    return tables.STORY_MEASURES.frame(long.assign(model="", unit="nats (PMI without ln N)"))
