"""The corpus stage's tables: stories, their sentences and counts (``results/<corpus>/corpus/``)."""

from __future__ import annotations

from storyflow.tables.base import Table

STORIES = Table(
    "stories",
    {
        "story_id": "object",
        "story_type": "object",
        "text": "object",
        "topic": "object",
        "has_topic": "bool",
    },
    key=("story_id",),
    extra=True,
    doc="One row per sampled story. story_type: the corpus's grouping label (HIPPOCORPUS "
    "memType, a book passage's genre/point of view, a HANNA model, a CSV's group column); "
    "topic: the story's summary or prompt (None when absent). Corpora add label columns.",
)

EXCLUDED = Table(
    "excluded stories",
    {"story_id": "object", "story_type": "object", "row": "int64", "reason": "object"},
    doc="Stories left out of a corpus, with the CSV row (1-based, header = 1) and the reason.",
)

SAMPLE_COUNTS = Table(
    "sample counts",
    {
        "story_type": "object",
        "n_in_corpus": "int64",
        "n_excluded": "int64",
        "n_sampled": "int64",
        "n_with_topic": "int64",
        "n_without_topic": "int64",
    },
    doc="Stories per story type: in the corpus, excluded, sampled, with and without a topic.",
)

SENTENCES = Table(
    "sentences",
    {"story_id": "object", "sentence_idx": "int64", "text": "object"},
    key=("story_id", "sentence_idx"),
    doc="One row per sentence (spaCy split), numbered 0, 1, 2, ... within each story.",
)

SENTENCE_COUNTS = Table(
    "sentence counts",
    {"story_id": "object", "story_type": "object", "n_sentences": "int64"},
    doc="Sentences per story.",
)
