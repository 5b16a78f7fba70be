"""The covariate table: every sentence's window and sentence measures, and the corpus entry
point."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.errors import InputDataError, StoryflowError
from storyflow.lm.embeddings import (
    Encoder,
    load_encoder,
)
from storyflow.progress import LoggedBar

if TYPE_CHECKING:
    from spacy.language import Language

from storyflow.measures.sequentiality.covariates.connectives import (
    ConnectiveMatcher,
    load_connectives,
)
from storyflow.measures.sequentiality.covariates.discourse import (
    AgentMentions,
    AgentResolver,
    ConnectiveRelationClassifier,
    RelationClassifier,
    SubjectPronounResolver,
    agent_resolver,
    relation_classifier,
)
from storyflow.measures.sequentiality.covariates.sentence import (
    SentenceMeasures,
    jaccard,
    measure_sentence,
)
from storyflow.measures.sequentiality.covariates.vocabulary import CATEGORIES, RELATION_FLOW

# --------------------------------------------------------------------------------------------
# The covariate table

log = logging.getLogger(__name__)

#: Window measures: base name → meaning (columns ``<name>_h<w>``).
WINDOW_MEASURES = {
    "lemma_overlap": "Jaccard of content-word lemma sets, sentence vs window (0..1)",
    "embedding_sim": "cosine of the sentence embedding with the window's mean embedding (-1..1)",
    "tense_distance": "1 - Jaccard of verb/auxiliary tag sets, sentence vs window (0..1)",
    "agent_continuity": "Jaccard of the window's agent keys and the sentence's mentions (0..1)",
    "length_delta": "tokens minus the window's mean tokens (tokens)",
}
#: Window-free numeric measures.
SENTENCE_MEASURES = ("n_tokens", "rare_word_rate", "clause_count", "tree_depth")
CONNECTIVE_COLUMNS = (*(f"conn_{c}" for c in CATEGORIES), "conn_onset")


def window_columns(windows: Sequence[int]) -> list[str]:
    return [f"{m}_h{w}" for w in windows for m in WINDOW_MEASURES]


def covariate_columns(windows: Sequence[int]) -> list[str]:
    """Columns of :func:`compute_covariates`' table, in order."""
    return [
        "story_id",
        "sentence_idx",
        "n_tokens",
        "rare_word_rate",
        "n_content_words",
        "clause_count",
        "tree_depth",
        *CONNECTIVE_COLUMNS,
        "connectives",
        "rhetorical_relation",
        "rhetorical_disrupting",
        *window_columns(windows),
        "agent",
        "rhetorical_source",
        "agent_source",
        "embedding_model",
    ]


def _check_sentences(sentences: pd.DataFrame) -> pd.DataFrame:
    tables.SENTENCES.check(sentences)
    if sentences.duplicated(["story_id", "sentence_idx"]).any():
        raise InputDataError("sentence table", "repeats a (story_id, sentence_idx) pair")
    stories = pd.Index(pd.unique(sentences["story_id"]))
    sentences = (
        sentences.assign(_story=stories.get_indexer(sentences["story_id"]))
        .sort_values(["_story", "sentence_idx"], kind="stable")
        .drop(columns="_story")
        .reset_index(drop=True)
    )
    order = sentences.groupby("story_id", sort=False).cumcount()
    gaps = sentences[sentences["sentence_idx"].to_numpy() != order.to_numpy()]
    if len(gaps):
        raise InputDataError(
            "sentence table",
            f"story {gaps['story_id'].iloc[0]!r} does not number its sentences 0, 1, 2, ...",
        )
    return sentences


def _parse(nlp: Language, texts: Sequence[str], batch_size: int) -> list[Any]:
    """The spaCy Doc of each text, parsed in batches of ``batch_size`` (progress logged)."""
    return list(
        LoggedBar(
            nlp.pipe(texts, batch_size=batch_size),
            total=len(texts),
            desc="parsing sentences",
            unit="sentence",
            file=sys.stderr,
            mininterval=10.0,
        )
    )


@dataclass(frozen=True)
class ParsedSentences:
    """A sentence table parsed once: what every window measure is built from.

    Attributes:
        sentences: The sentence table, checked and in story then sentence order.
        docs: The spaCy Doc of each sentence (same order).
        measures: Each sentence's :class:`SentenceMeasures` (same order).
        sizes: Sentences per story, in story order (the rows of a story are consecutive).
    """

    sentences: pd.DataFrame
    docs: list[Any]
    measures: list[SentenceMeasures]
    sizes: list[int]


def parse_sentences(
    sentences: pd.DataFrame,
    nlp: Language,
    matcher: ConnectiveMatcher,
    *,
    zipf_threshold: float,
    batch_size: int = 64,
) -> ParsedSentences:
    """Check and order the sentence table, parse every sentence with ``nlp`` and measure it
    (:func:`measure_sentence`; a content word is rare below ``zipf_threshold``).

    Raises:
        InputDataError: a repeated (story_id, sentence_idx) pair, or a story whose sentences are
            not numbered 0, 1, 2, ...
    """
    sentences = _check_sentences(sentences)
    docs = _parse(nlp, sentences["text"].astype(str).tolist(), batch_size)
    log.info("parsed %d sentences of %d stories", len(docs), sentences["story_id"].nunique())
    return ParsedSentences(
        sentences=sentences,
        docs=docs,
        measures=[measure_sentence(doc, matcher, zipf_threshold) for doc in docs],
        sizes=sentences.groupby("story_id", sort=False).size().tolist(),
    )


def pair_measures(
    measure: SentenceMeasures,
    embedding: np.ndarray,
    window: Sequence[SentenceMeasures],
    window_embeddings: np.ndarray,
) -> dict[str, float]:
    """The three measures Table C1 defines on a sentence pair, of a sentence against a window of
    one or more sentences of its story (their lemma and tag sets united, their embeddings
    averaged): ``lemma_overlap`` (Jaccard, 0..1; 0 when both lemma sets are empty),
    ``embedding_sim`` (cosine, -1..1, of ``embedding`` with the window's mean embedding; 0 when
    that mean is the zero vector) and ``tense_distance`` (1 - Jaccard of the verb/auxiliary tag
    sets, 0..1; 0 when neither has a verb). Each is symmetric in a pair of single sentences.
    ``embedding`` and the rows of ``window_embeddings`` are unit length."""
    centroid = window_embeddings.mean(axis=0)
    norm = float(np.linalg.norm(centroid))
    return {
        "lemma_overlap": jaccard(
            measure.content_lemmas, frozenset().union(*(p.content_lemmas for p in window)), 0.0
        ),
        "embedding_sim": float(embedding @ centroid / norm) if norm else 0.0,
        "tense_distance": 1.0
        - jaccard(measure.verb_tags, frozenset().union(*(p.verb_tags for p in window)), 1.0),
    }


def _story_rows(
    sizes: Sequence[int],
    docs: Sequence[Any],
    measures: Sequence[SentenceMeasures],
    embeddings: np.ndarray,
    windows: Sequence[int],
    relations: RelationClassifier,
    agents: AgentResolver,
) -> list[dict[str, Any]]:
    """The covariate rows (:func:`_row`) of stories of ``sizes`` sentences each, laid end to
    end in ``docs``, ``measures`` and ``embeddings`` (one row each); the relation classifier
    and the agent resolver see one story at a time."""
    rows: list[dict[str, Any]] = []
    start = 0
    for n in sizes:
        span = range(start, start + n)
        story_docs = [docs[k] for k in span]
        labels = relations(story_docs)
        agent_info = agents(story_docs)
        if len(labels) != n or len(agent_info) != n:
            raise ValueError(
                f"relation classifier / agent resolver returned {len(labels)} / "
                f"{len(agent_info)} items for a story of {n} sentences"
            )
        for i, k in enumerate(span):
            rows.append(_row(i, k, start, windows, measures, embeddings, labels[i], agent_info))
        start += n
    return rows


def embed(encode: Encoder, sentences: pd.DataFrame) -> np.ndarray:
    """The embedding of each sentence of ``sentences`` (its ``text``, in row order): one
    unit-length row each, from ``encode``.

    Raises:
        ValueError: the encoder returned another number of rows.
    """
    texts = sentences["text"].astype(str).tolist()
    embeddings = encode(texts) if texts else np.zeros((0, 1))
    if embeddings.shape[0] != len(texts):
        raise ValueError(f"encoder returned {embeddings.shape[0]} rows for {len(texts)} sentences")
    return embeddings


def compute_covariates(
    sentences: pd.DataFrame,
    nlp: Language,
    encode: Encoder,
    *,
    matcher: ConnectiveMatcher,
    relations: RelationClassifier,
    agents: AgentResolver,
    embedding_model: str,
    windows: Sequence[int],
    zipf_threshold: float,
    batch_size: int = 64,
) -> pd.DataFrame:
    """Covariates of every sentence (docs/method.md §6).

    Long because its docstring gives the unit and meaning of every column; the work is in
    :func:`parse_sentences`, :func:`embed`, :func:`_story_rows` and :func:`_row`.

    Args:
        sentences: The sentence table (``story_id``, ``sentence_idx`` 0-based, ``text``).
        nlp: A full spaCy pipeline (tagger, parser, lemmatizer; NER helps the agent heuristic).
        encode: Sentence embedder (:func:`load_encoder`), rows of unit length.
        matcher: Connective finder (:class:`ConnectiveMatcher`).
        relations, agents: The relation classifier and agent resolver (substitutes or tools).
        embedding_model: Name written to the ``embedding_model`` column.
        windows: Window sizes w of the window measures (preceding sentences of the story).
        zipf_threshold: A content word is rare when its Zipf frequency is below this.
        batch_size: Sentences per spaCy batch (speed only).

    Returns:
        One row per sentence, in story then sentence order, columns :func:`covariate_columns`:

        * ``n_tokens``: length in spaCy tokens, whitespace excluded, punctuation included
          (the paper's Table C1);
        * ``rare_word_rate``: share (0..1) of content words (NOUN, VERB, ADJ, ADV, PROPN; no
          stop words, no punctuation) with Zipf frequency < ``zipf_threshold``; 0 when the
          sentence has none (``n_content_words`` = 0);
        * ``clause_count``, ``tree_depth``: see :func:`clause_count`, :func:`tree_depth`;
        * ``conn_temporal``, ``conn_causal``, ``conn_contrastive``, ``conn_additive`` (0/1): the
          sentence contains a connective of that category; ``conn_onset`` (0/1): it begins with
          one; ``connectives``: the connectives found, ``|``-separated;
        * ``rhetorical_relation``: relation to the previous sentence (None for the first);
          ``rhetorical_disrupting``: 1.0 for contrast/background/explanation, 0.0 for the
          flow-promoting classes, NaN for the first sentence;
        * per window w, NaN for a story's first sentence: ``lemma_overlap_h{w}``: Jaccard of
          the sentence's NOUN/VERB/ADJ/ADV lemma set and the union of the window's (0 when both
          are empty); ``embedding_sim_h{w}``: cosine of the sentence embedding with the mean
          of the window's; ``tense_distance_h{w}``: 1 − Jaccard of the sentence's verb and
          auxiliary fine-grained tags (VBD, VBZ, MD, ...) and the window's (0 when both have
          none); ``agent_continuity_h{w}``: Jaccard of the window's agent keys and the sentence's
          mention keys (0 when both are empty); ``length_delta_h{w}``: ``n_tokens`` minus the
          window's mean ``n_tokens`` (tokens; signed: positive = longer than the window);
        * ``agent``: the sentence's main agent as written; ``rhetorical_source``,
          ``agent_source``, ``embedding_model``: the tools that produced the values.
    """
    windows = [int(w) for w in windows]  # >= 1, at least one: the config schema's range
    parsed = parse_sentences(
        sentences, nlp, matcher, zipf_threshold=zipf_threshold, batch_size=batch_size
    )
    sentences = parsed.sentences
    embeddings = embed(encode, sentences)
    rows = _story_rows(
        parsed.sizes, parsed.docs, parsed.measures, embeddings, windows, relations, agents
    )
    table = pd.DataFrame(rows)
    table.insert(0, "story_id", sentences["story_id"].astype(str).to_numpy())
    table.insert(1, "sentence_idx", sentences["sentence_idx"].astype("int64").to_numpy())
    table["rhetorical_source"] = relations.name
    table["agent_source"] = agents.name
    table["embedding_model"] = embedding_model
    columns = covariate_columns(windows)
    if table.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    return table[columns]


def _row(
    i: int,
    k: int,
    start: int,
    windows: Sequence[int],
    measures: Sequence[SentenceMeasures],
    embeddings: np.ndarray,
    relation: str | None,
    agent_info: Sequence[AgentMentions],
) -> dict[str, Any]:
    """Covariates of sentence i of a story whose first sentence is row ``start`` (k = start + i)."""
    m = measures[k]
    matches = m.connectives
    row: dict[str, Any] = {
        "n_tokens": m.n_tokens,
        "rare_word_rate": m.n_rare_words / m.n_content_words if m.n_content_words else 0.0,
        "n_content_words": m.n_content_words,
        "clause_count": m.clause_count,
        "tree_depth": m.tree_depth,
        **{f"conn_{c}": int(any(x.connective.category == c for x in matches)) for c in CATEGORIES},
        "conn_onset": int(any(x.onset for x in matches)),
        "connectives": "|".join(x.connective.text for x in matches),
        "rhetorical_relation": relation,
        "agent": agent_info[i].agent_text,
    }
    if relation is None:
        row["rhetorical_disrupting"] = np.nan
    elif relation in RELATION_FLOW:
        row["rhetorical_disrupting"] = float(RELATION_FLOW[relation] == "disrupting")
    else:
        raise StoryflowError(
            f"relation classifier returned {relation!r}, not one of {', '.join(RELATION_FLOW)}"
        )
    for w in windows:
        window = range(max(start, k - w), k)
        if not window:
            row.update({f"{name}_h{w}": np.nan for name in WINDOW_MEASURES})
            continue
        prev = [measures[j] for j in window]
        pairs = pair_measures(m, embeddings[k], prev, embeddings[window.start : window.stop])
        row.update({f"{name}_h{w}": value for name, value in pairs.items()})
        row[f"agent_continuity_h{w}"] = jaccard(
            frozenset().union(*(agent_info[j - start].agent for j in window)),
            agent_info[i].mentions,
            0.0,
        )
        row[f"length_delta_h{w}"] = m.n_tokens - float(np.mean([p.n_tokens for p in prev]))
    return row


#: spaCy components the covariates need (tags, dependencies, lemmas).
REQUIRED_COMPONENTS = ("tagger", "parser", "lemmatizer")


def load_pipeline(name: str) -> Language:
    """The full spaCy pipeline ``name`` (see :func:`storyflow.sentences.load_spacy`).

    Raises:
        StoryflowError: not installed, or lacking a tagger, parser or lemmatizer.
    """
    from storyflow.sentences import load_spacy

    nlp = load_spacy(name, exclude=())
    missing = [c for c in REQUIRED_COMPONENTS if c not in nlp.pipe_names]
    if missing:
        raise StoryflowError(
            f"spaCy pipeline {name!r} lacks {', '.join(missing)}, which the covariates need; set "
            "sentences.spacy_model to a full pipeline such as en_core_web_sm"
        )
    return nlp


def corpus_covariates(
    sentences: pd.DataFrame,
    *,
    spacy_model: str,
    embedding_model: str,
    connectives: str | Path | None = None,
    relation_classifier_name: str = ConnectiveRelationClassifier.name,
    agent_resolver_name: str = SubjectPronounResolver.name,
    windows: Sequence[int],
    zipf_threshold: float,
    threads: int | None = None,
) -> pd.DataFrame:
    """Load the tools named in the config and run :func:`compute_covariates`."""
    matcher = ConnectiveMatcher(load_connectives(connectives))
    relations = relation_classifier(relation_classifier_name, matcher)
    agents = agent_resolver(agent_resolver_name)
    table = compute_covariates(
        sentences,
        load_pipeline(spacy_model),
        load_encoder(embedding_model, threads=threads),
        matcher=matcher,
        relations=relations,
        agents=agents,
        embedding_model=embedding_model,
        windows=windows,
        zipf_threshold=zipf_threshold,
    )
    counts = table["rhetorical_relation"].value_counts().to_dict()
    log.info(
        "covariates of %d sentences; connectives in %d; relations (%s) %s; agent source %s",
        len(table),
        int((table["connectives"] != "").sum()),
        relations.name,
        counts,
        agents.name,
    )
    return table
