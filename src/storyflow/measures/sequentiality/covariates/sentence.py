"""Per-sentence measures: word frequency, clauses, tree depth, the sentence's lemma, tag and
agent sets (docs/method.md §6)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

from storyflow.measures.sequentiality.covariates.connectives import (
    ConnectiveMatch,
    ConnectiveMatcher,
)
from storyflow.measures.sequentiality.covariates.vocabulary import (
    CLAUSE_DEPS,
    OVERLAP_POS,
    RARE_WORD_POS,
    VERB_POS,
)

# --------------------------------------------------------------------------------------------
# Per-sentence measures


@lru_cache(maxsize=200_000)
def zipf_frequency(word: str) -> float:
    """wordfreq's Zipf frequency of an English word (log10 of occurrences per billion words)."""
    from wordfreq import zipf_frequency as zipf

    return float(zipf(word, "en"))


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str], empty: float) -> float:
    """|a ∩ b| / |a ∪ b|, or ``empty`` when both sets are empty."""
    union = len(a | b)
    return len(a & b) / union if union else empty


def tree_depth(doc: Doc) -> int:
    """Edges on the longest root-to-leaf path of the dependency tree(s) (one word: 0)."""
    return max((sum(1 for _ in t.ancestors) for t in doc), default=0)


def is_word(token: Token) -> bool:
    """Whether a token can be a word of a part-of-speech class: not punctuation or whitespace.

    spaCy's small tagger sometimes labels a hyphen inside a word ("co-worker", "e-mailed") NOUN
    or VERB; such a token is punctuation (``is_punct``) and is never a content word, a verb or a
    clause marker here.
    """
    return not (token.is_punct or token.is_space)


def clause_count(doc: Doc) -> int:
    """Verbal roots plus verbs/auxiliaries heading a ccomp, xcomp, advcl, acl or relcl."""
    return sum(
        1
        for t in doc
        if is_word(t) and t.pos_ in VERB_POS and (t.dep_ == "ROOT" or t.dep_ in CLAUSE_DEPS)
    )


@dataclass(frozen=True)
class SentenceMeasures:
    """The per-sentence quantities the window measures are built from.

    Attributes:
        n_tokens: Length in spaCy tokens, whitespace tokens excluded and punctuation included
            (*Fiction Flows*, Table C1: spaCy tokenization excluding whitespace).
        content_lemmas: Lower-case lemmas of the NOUN, VERB, ADJ and ADV words (lexical overlap).
        verb_tags: Fine-grained tags (VBD, VBZ, MD, ...) of the VERB and AUX words (tense).
        n_content_words: NOUN, VERB, ADJ, ADV and PROPN words that are not stop words.
        n_rare_words: Those of them whose Zipf frequency is below the threshold.
        clause_count: Clause markers (:func:`clause_count`).
        tree_depth: Edges on the longest root-to-leaf path (:func:`tree_depth`).
        connectives: The connectives found, in text order.

    A "word" is a token that is not punctuation or whitespace (:func:`is_word`).
    """

    n_tokens: int
    content_lemmas: frozenset[str]
    verb_tags: frozenset[str]
    n_content_words: int
    n_rare_words: int
    clause_count: int
    tree_depth: int
    connectives: tuple[ConnectiveMatch, ...]


def measure_sentence(
    doc: Doc, matcher: ConnectiveMatcher, zipf_threshold: float
) -> SentenceMeasures:
    """Window-free measures of one parsed sentence (see :func:`compute_covariates`)."""
    words = [t for t in doc if is_word(t)]
    content = [t for t in words if t.pos_ in RARE_WORD_POS and not t.is_stop]
    rare = sum(1 for t in content if zipf_frequency(t.lower_) < zipf_threshold)
    return SentenceMeasures(
        n_tokens=sum(1 for t in doc if not t.is_space),
        content_lemmas=frozenset(t.lemma_.lower() for t in words if t.pos_ in OVERLAP_POS),
        verb_tags=frozenset(t.tag_ for t in words if t.pos_ in VERB_POS),
        n_content_words=len(content),
        n_rare_words=rare,
        clause_count=clause_count(doc),
        tree_depth=tree_depth(doc),
        connectives=tuple(matcher.find(doc)),
    )
