"""Sentence-level coherence covariates (``docs/method.md`` §6, ``docs/regression.md``).

Every sentence of the sentence table gets one row of covariates. They depend on the text only
(not on the language model), so they are computed once per corpus. Measures that compare a
sentence with what came before use a *window* of w preceding sentences of the same story
(w = 1: "H1", the previous sentence; w = 3: "H3", the previous three; fewer at the start of a
story, exactly as the NLL histories). Their columns end in ``_h{w}`` and are NaN for a story's
first sentence, which has no preceding sentence.

Two measures of the replication used tools that do not run offline; storyflow uses documented
substitutes behind small interfaces so that the real tool can be plugged in (config keys
``covariates.relation_classifier`` and ``covariates.agent_resolver``, ``"module:factory"``):

- rhetorical relations: a neural RST parser → :class:`ConnectiveRelationClassifier`
  (``"connective-heuristic"``: the explicit connective that links the sentence to the previous
  one, then a pluperfect cue, else "implicit"), any :class:`RelationClassifier`;
- agent continuity: first grammatical subject expanded through a coreference model →
  :class:`SubjectPronounResolver` (``"subject-pronoun-heuristic"``: the subject's lemma plus the
  pronoun keys its person, number and gender allow), any :class:`AgentResolver`.

The outputs name the tool that produced them (columns ``rhetorical_source``, ``agent_source``,
``embedding_model``).
"""

from __future__ import annotations

import csv
import importlib
import logging
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import pandas as pd
from tqdm import tqdm

from storyflow import tables
from storyflow.errors import InputDataError, StoryflowError
from storyflow.lm.embeddings import (
    Encoder,
    load_encoder,
)

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

log = logging.getLogger(__name__)

#: Parts of speech of the content words whose lemmas are compared (docs/method.md §6).
OVERLAP_POS = frozenset({"NOUN", "VERB", "ADJ", "ADV"})
#: Parts of speech of the content words counted by the rare-word rate (stop words excluded).
RARE_WORD_POS = OVERLAP_POS | {"PROPN"}
VERB_POS = frozenset({"VERB", "AUX"})
#: Dependencies of verbs/auxiliaries that head a clause besides the root (docs/method.md §6).
CLAUSE_DEPS = frozenset({"ccomp", "xcomp", "advcl", "acl", "relcl"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
#: Connective categories with one indicator column each (``conn_<category>``).
CATEGORIES = ("temporal", "causal", "contrastive", "additive")
CONSTRAINTS = frozenset({"any", "mark", "verbal", "cc", "onset"})
#: Rhetorical relation classes and their flow (docs/method.md §6). "implicit" = no signal found by
#: the heuristic substitute; counted as flow-promoting (see docs/regression.md).
RELATION_FLOW = {
    "sequence": "promoting",
    "elaboration": "promoting",
    "cause": "promoting",
    "joint": "promoting",
    "implicit": "promoting",
    "contrast": "disrupting",
    "background": "disrupting",
    "explanation": "disrupting",
}
#: Dependencies of a connective's first token that make it modify the whole main clause
#: (a discourse adverbial such as "I, however, stayed" or "We then left").
ADVERBIAL_DEPS = frozenset({"advmod", "npadvmod", "prep"})

#: Key of a personal pronoun: person, number and (3rd singular) gender.
PRONOUN_KEYS = {
    **dict.fromkeys(["i", "me", "my", "mine", "myself"], "pron:1sg"),
    **dict.fromkeys(["we", "us", "our", "ours", "ourselves"], "pron:1pl"),
    **dict.fromkeys(["you", "your", "yours", "yourself", "yourselves"], "pron:2"),
    **dict.fromkeys(["he", "him", "his", "himself"], "pron:3sg-m"),
    **dict.fromkeys(["she", "her", "hers", "herself"], "pron:3sg-f"),
    **dict.fromkeys(["it", "its", "itself"], "pron:3sg-n"),
    **dict.fromkeys(["they", "them", "their", "theirs", "themselves"], "pron:3pl"),
}
#: Pronoun keys a nominal subject may be referred back to with.
PERSON_SINGULAR = frozenset({"pron:3sg-m", "pron:3sg-f"})
THING_SINGULAR = PERSON_SINGULAR | {"pron:3sg-n"}
PLURAL = frozenset({"pron:3pl"})


# --------------------------------------------------------------------------------------------
# Connective lexicon


@dataclass(frozen=True)
class Connective:
    """One entry of the connective lexicon (``storyflow/data/connectives.tsv`` documents it)."""

    words: tuple[str, ...]
    category: str
    relation: str
    constraint: str
    pdtb_sense: str

    @property
    def text(self) -> str:
        return " ".join(self.words)


def default_lexicon_path() -> Path:
    """The packaged lexicon (PDTB 2.0 explicit connectives, see the file's header)."""
    return Path(str(resources.files("storyflow") / "data" / "connectives.tsv"))


def load_connectives(path: str | Path | None = None) -> list[Connective]:
    """Read a connective lexicon: tab-separated, ``#`` comment lines, a header row.

    Args:
        path: The TSV file; ``None`` = the packaged lexicon.

    Raises:
        InputDataError: a row has a wrong number of fields, an unknown category, relation or
            constraint, or repeats a connective (the message names the 1-based line).
    """
    path = Path(path) if path is not None else default_lexicon_path()
    if not path.is_file():
        raise StoryflowError(f"connective lexicon {path} does not exist")
    fields = ["connective", "category", "relation", "constraint", "pdtb_sense"]
    entries: list[Connective] = []
    seen: set[tuple[str, ...]] = set()
    header_seen = False
    with path.open(encoding="utf-8", newline="") as handle:
        for line_no, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or row[0].startswith("#"):
                continue
            if not header_seen:
                if row != fields:
                    raise InputDataError(path, f"header must be {fields}, found {row}", line_no)
                header_seen = True
                continue
            if len(row) != len(fields):
                raise InputDataError(path, f"expected {len(fields)} fields, found {row}", line_no)
            text, category, relation, constraint, sense = (v.strip() for v in row)
            words = tuple(text.lower().split())
            problem = (
                "empty connective"
                if not words
                else f"unknown category {category!r} (use {', '.join(CATEGORIES)})"
                if category not in CATEGORIES
                else f"unknown relation {relation!r} (use {', '.join(RELATION_FLOW)})"
                if relation not in RELATION_FLOW
                else f"unknown constraint {constraint!r} (use {', '.join(sorted(CONSTRAINTS))})"
                if constraint not in CONSTRAINTS
                else f"connective {text!r} listed twice"
                if words in seen
                else None
            )
            if problem:
                raise InputDataError(path, problem, line_no)
            seen.add(words)
            entries.append(Connective(words, category, relation, constraint, sense))
    if not entries:
        raise InputDataError(path, "the lexicon has no entries")
    return entries


@dataclass(frozen=True)
class ConnectiveMatch:
    """A connective found in a sentence: the entry, its first token and whether it opens it."""

    connective: Connective
    token: Token
    onset: bool


def _onset_index(doc: Doc) -> int | None:
    """Index of the sentence's first word (leading punctuation such as quotes skipped)."""
    return next((t.i for t in doc if not (t.is_punct or t.is_space)), None)


def _constraint_holds(token: Token, constraint: str, onset: bool) -> bool:
    if constraint == "any":
        return True
    if constraint == "mark":
        return token.dep_ == "mark"
    if constraint == "verbal":
        return token.head is not token and token.head.pos_ in VERB_POS
    if constraint == "cc":
        return token.dep_ == "cc" or onset
    return onset  # "onset"


class ConnectiveMatcher:
    """Finds the lexicon's connectives in a parsed sentence (longest match first, no overlaps)."""

    def __init__(self, lexicon: Iterable[Connective]) -> None:
        self.lexicon = list(lexicon)
        by_first: dict[str, list[Connective]] = {}
        for entry in self.lexicon:
            by_first.setdefault(entry.words[0], []).append(entry)
        self._by_first = {k: sorted(v, key=lambda e: -len(e.words)) for k, v in by_first.items()}

    def find(self, doc: Doc) -> list[ConnectiveMatch]:
        """Connectives of ``doc`` in text order; a word belongs to at most one match."""
        words = [t.lower_ for t in doc]
        onset = _onset_index(doc)
        found: list[ConnectiveMatch] = []
        i = 0
        while i < len(words):
            for entry in self._by_first.get(words[i], ()):
                n = len(entry.words)
                at_onset = i == onset
                if tuple(words[i : i + n]) == entry.words and _constraint_holds(
                    doc[i], entry.constraint, at_onset
                ):
                    found.append(ConnectiveMatch(entry, doc[i], at_onset))
                    i += n
                    break
            else:
                i += 1
        return found


# --------------------------------------------------------------------------------------------
# Plug-in interfaces for the two substitutes


@runtime_checkable
class RelationClassifier(Protocol):
    """Rhetorical relation of each sentence of a story to the one before it.

    A real RST parser plugs in by implementing this: ``name`` is written to the output column
    ``rhetorical_source``; a call gets the story's parsed sentences in order and returns one
    label per sentence, ``None`` for the first, every other label a key of
    :data:`RELATION_FLOW` (an RST parser's labels are mapped onto these classes by the adapter).
    """

    name: str

    def __call__(self, docs: Sequence[Doc]) -> list[str | None]: ...


@dataclass(frozen=True)
class AgentMentions:
    """What the agent-continuity measure needs from one sentence.

    Attributes:
        agent: Keys naming the sentence's main agent (its first grammatical subject), expanded
            with every key that may refer back to it (coreference, or the heuristic's pronouns).
        mentions: Keys of every referring expression in the sentence.
        agent_text: The agent as written ("" when the sentence has no subject).
    """

    agent: frozenset[str]
    mentions: frozenset[str]
    agent_text: str


@runtime_checkable
class AgentResolver(Protocol):
    """Main agent and mentions of each sentence of a story.

    A coreference model plugs in by implementing this with cluster ids as keys (the agent's
    cluster; the clusters mentioned in the sentence). ``name`` is written to ``agent_source``.
    """

    name: str

    def __call__(self, docs: Sequence[Doc]) -> list[AgentMentions]: ...


class ConnectiveRelationClassifier:
    """Substitute for an RST parser: relation from explicit connectives and one tense cue.

    For sentence i (i ≥ 1), in this order:

    1. a connective that opens the sentence ("But ...", "Then ...") gives its lexicon relation;
    2. else a connective attached as an adverbial to the main verb ("I, however, stayed",
       "We then left") gives its relation (subordinators such as "because" inside the sentence
       relate its own clauses, not the sentence to the previous one, and are not used);
    3. else a main verb in the past perfect ("had left") marks a flashback: ``background``;
    4. else ``implicit`` (no signal; counted as flow-promoting).
    """

    name = "connective-heuristic"

    def __init__(self, matcher: ConnectiveMatcher) -> None:
        self.matcher = matcher

    def relation(self, doc: Doc) -> str:
        matches = self.matcher.find(doc)
        for match in matches:
            if match.onset:
                return match.connective.relation
        for match in matches:
            token = match.token
            if token.dep_ in ADVERBIAL_DEPS and token.head.dep_ == "ROOT":
                return match.connective.relation
        for root in (t for t in doc if t.dep_ == "ROOT"):
            if root.tag_ == "VBN" and any(
                c.dep_ == "aux" and c.lemma_ == "have" and c.tag_ == "VBD" for c in root.children
            ):
                return "background"
        return "implicit"

    def __call__(self, docs: Sequence[Doc]) -> list[str | None]:
        return [None] + [self.relation(doc) for doc in docs[1:]]


def _pronoun_key(token: Token) -> str | None:
    return PRONOUN_KEYS.get(token.lower_) if token.pos_ == "PRON" else None


class SubjectPronounResolver:
    """Substitute for coreference: first grammatical subject plus pronoun/person heuristics.

    - agent: the first token with dependency nsubj/nsubjpass. A personal pronoun gives its
      person/number/gender key (``pron:1sg`` for I/me/my ..., ``pron:3sg-f`` for she/her ...).
      A noun gives its lower-case lemma and those of its compound modifiers ("John Smith"),
      expanded with the pronoun keys that could refer back to it: plural → ``pron:3pl``;
      proper noun or PERSON entity → ``pron:3sg-m``, ``pron:3sg-f``; other singular nouns →
      those and ``pron:3sg-n``. Anything else gives its lemma.
    - mentions: the lemmas of the sentence's nouns and proper nouns and the keys of its
      personal pronouns (possessives and objects included).

    Unlike a coreference model it cannot tell which of several same-gender referents a pronoun
    means, does not link a noun in the current sentence back to a pronoun agent, and does not
    resolve synonyms or descriptions ("my mother" ... "mom").
    """

    name = "subject-pronoun-heuristic"

    def agent_keys(self, subject: Token) -> frozenset[str]:
        key = _pronoun_key(subject)
        if key:
            return frozenset({key})
        keys = {subject.lemma_.lower()} | {
            c.lemma_.lower() for c in subject.children if c.dep_ == "compound"
        }
        if subject.pos_ in {"NOUN", "PROPN"}:
            if subject.tag_ in {"NNS", "NNPS"} or "Plur" in subject.morph.get("Number"):
                keys |= PLURAL
            elif subject.pos_ == "PROPN" or subject.ent_type_ == "PERSON":
                keys |= PERSON_SINGULAR
            else:
                keys |= THING_SINGULAR
        return frozenset(keys)

    def analyse(self, doc: Doc) -> AgentMentions:
        subject = next((t for t in doc if t.dep_ in SUBJECT_DEPS), None)
        mentions = set()
        for token in doc:
            key = _pronoun_key(token)
            if key:
                mentions.add(key)
            elif token.pos_ in {"NOUN", "PROPN"}:
                mentions.add(token.lemma_.lower())
        if subject is None:
            return AgentMentions(frozenset(), frozenset(mentions), "")
        text = " ".join([c.text for c in subject.children if c.dep_ == "compound"] + [subject.text])
        return AgentMentions(self.agent_keys(subject), frozenset(mentions), text)

    def __call__(self, docs: Sequence[Doc]) -> list[AgentMentions]:
        return [self.analyse(doc) for doc in docs]


T = TypeVar("T")


def load_plugin(spec: str, builtins: Mapping[str, Callable[[], T]], what: str) -> T:
    """A built-in substitute by name, or ``"package.module:factory"`` called without arguments.

    Raises:
        StoryflowError: unknown name, module or attribute, or the object lacks ``name`` or is not
            callable.
    """
    if spec in builtins:
        return builtins[spec]()
    if ":" not in spec:
        raise StoryflowError(
            f"unknown {what} {spec!r}: use one of {', '.join(builtins)} or 'package.module:factory'"
        )
    module_name, _, attr = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as err:
        raise StoryflowError(f"cannot load {what} {spec!r}: {err}") from err
    plugin = factory()
    if not callable(plugin) or not isinstance(getattr(plugin, "name", None), str):
        raise StoryflowError(
            f"{what} {spec!r} must return a callable object with a string attribute 'name'"
        )
    return plugin


def relation_classifier(spec: str, matcher: ConnectiveMatcher) -> RelationClassifier:
    """The relation classifier named in the config (``covariates.relation_classifier``)."""
    return load_plugin(
        spec,
        {ConnectiveRelationClassifier.name: lambda: ConnectiveRelationClassifier(matcher)},
        "relation classifier",
    )


def agent_resolver(spec: str) -> AgentResolver:
    """The agent resolver named in the config (``covariates.agent_resolver``)."""
    return load_plugin(
        spec, {SubjectPronounResolver.name: SubjectPronounResolver}, "agent resolver"
    )


# --------------------------------------------------------------------------------------------
# Sentence embeddings


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


# --------------------------------------------------------------------------------------------
# The covariate table

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
    sentences = _check_sentences(sentences)
    texts = sentences["text"].astype(str).tolist()
    docs = list(
        tqdm(
            nlp.pipe(texts, batch_size=batch_size),
            total=len(texts),
            desc="parsing sentences",
            unit="sentence",
            file=sys.stderr,
            mininterval=10.0,
        )
    )
    log.info("parsed %d sentences of %d stories", len(docs), sentences["story_id"].nunique())
    embeddings = encode(texts) if texts else np.zeros((0, 1))
    if embeddings.shape[0] != len(texts):
        raise ValueError(f"encoder returned {embeddings.shape[0]} rows for {len(texts)} sentences")
    measures = [measure_sentence(doc, matcher, zipf_threshold) for doc in docs]

    rows: list[dict[str, Any]] = []
    start = 0
    for _story_id, n in sentences.groupby("story_id", sort=False).size().items():
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
        centroid = embeddings[window.start : window.stop].mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        row[f"lemma_overlap_h{w}"] = jaccard(
            m.content_lemmas, frozenset().union(*(p.content_lemmas for p in prev)), 0.0
        )
        row[f"embedding_sim_h{w}"] = float(embeddings[k] @ centroid / norm) if norm else 0.0
        row[f"tense_distance_h{w}"] = 1.0 - jaccard(
            m.verb_tags, frozenset().union(*(p.verb_tags for p in prev)), 1.0
        )
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
