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

from storyflow.measures.sequentiality.covariates.connectives import (
    Connective,
    ConnectiveMatch,
    ConnectiveMatcher,
    default_lexicon_path,
    load_connectives,
)
from storyflow.measures.sequentiality.covariates.discourse import (
    AgentMentions,
    AgentResolver,
    ConnectiveRelationClassifier,
    RelationClassifier,
    SubjectPronounResolver,
    agent_resolver,
    load_plugin,
    relation_classifier,
)
from storyflow.measures.sequentiality.covariates.sentence import (
    SentenceMeasures,
    clause_count,
    is_word,
    jaccard,
    measure_sentence,
    tree_depth,
    zipf_frequency,
)
from storyflow.measures.sequentiality.covariates.table import (
    CONNECTIVE_COLUMNS,
    REQUIRED_COMPONENTS,
    SENTENCE_MEASURES,
    WINDOW_MEASURES,
    ParsedSentences,
    compute_covariates,
    corpus_covariates,
    covariate_columns,
    embed,
    load_pipeline,
    pair_measures,
    parse_sentences,
    window_columns,
)
from storyflow.measures.sequentiality.covariates.vocabulary import (
    ADVERBIAL_DEPS,
    CATEGORIES,
    CLAUSE_DEPS,
    CONSTRAINTS,
    OVERLAP_POS,
    PERSON_SINGULAR,
    PLURAL,
    PRONOUN_KEYS,
    RARE_WORD_POS,
    RELATION_FLOW,
    SUBJECT_DEPS,
    THING_SINGULAR,
    VERB_POS,
)

__all__ = [
    "ADVERBIAL_DEPS",
    "CATEGORIES",
    "CLAUSE_DEPS",
    "CONNECTIVE_COLUMNS",
    "CONSTRAINTS",
    "OVERLAP_POS",
    "PERSON_SINGULAR",
    "PLURAL",
    "PRONOUN_KEYS",
    "RARE_WORD_POS",
    "RELATION_FLOW",
    "REQUIRED_COMPONENTS",
    "SENTENCE_MEASURES",
    "SUBJECT_DEPS",
    "THING_SINGULAR",
    "VERB_POS",
    "WINDOW_MEASURES",
    "AgentMentions",
    "AgentResolver",
    "Connective",
    "ConnectiveMatch",
    "ConnectiveMatcher",
    "ConnectiveRelationClassifier",
    "ParsedSentences",
    "RelationClassifier",
    "SentenceMeasures",
    "SubjectPronounResolver",
    "agent_resolver",
    "clause_count",
    "compute_covariates",
    "corpus_covariates",
    "covariate_columns",
    "default_lexicon_path",
    "embed",
    "is_word",
    "jaccard",
    "load_connectives",
    "load_pipeline",
    "load_plugin",
    "measure_sentence",
    "pair_measures",
    "parse_sentences",
    "relation_classifier",
    "tree_depth",
    "window_columns",
    "zipf_frequency",
]
