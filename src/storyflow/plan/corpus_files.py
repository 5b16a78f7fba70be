"""The corpus stage's files, each named once: what every measure reads of a corpus
(``results/<corpus>/corpus/``). A module of their own so that a measure's planning module can
name them without importing the corpus stage's planning (:mod:`storyflow.plan.corpus`, which
reads the measures' registry)."""

from __future__ import annotations

from storyflow.plan.layout import Layout

#: ``results/<corpus>/corpus/``
OUT = Layout("corpus")

#: The stories analysed (:data:`storyflow.tables.STORIES`).
STORIES = OUT("stories.parquet")
#: Their sentences (:data:`storyflow.tables.SENTENCES`).
SENTENCES = OUT("sentences.parquet")
#: Sentences per story.
SENTENCE_COUNTS = OUT.table("sentence_counts.csv")
#: Stories per group read and kept.
SAMPLE_COUNTS = OUT.table("sample_counts.csv")
#: Stories left out while reading, with the reason.
EXCLUDED_STORIES = OUT.table("excluded_stories.csv")
#: The books' point of view per passage (books only).
POINT_OF_VIEW = OUT.table("point_of_view.csv")
