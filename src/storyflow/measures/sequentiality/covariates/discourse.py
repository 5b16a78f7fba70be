"""The two substitutes and their plug-in interfaces: rhetorical relations
(:class:`ConnectiveRelationClassifier`, any :class:`RelationClassifier`) and agent continuity
(:class:`SubjectPronounResolver`, any :class:`AgentResolver`), loaded by name
(``covariates.relation_classifier``, ``covariates.agent_resolver``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from storyflow.errors import StoryflowError

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

from storyflow.measures.sequentiality.covariates.connectives import ConnectiveMatcher
from storyflow.measures.sequentiality.covariates.vocabulary import (
    ADVERBIAL_DEPS,
    PERSON_SINGULAR,
    PLURAL,
    PRONOUN_KEYS,
    SUBJECT_DEPS,
    THING_SINGULAR,
)

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
            if subject.tag_ in {"NNS", "NNPS"} or "Plur" in subject.morph.get("Number", None):
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
