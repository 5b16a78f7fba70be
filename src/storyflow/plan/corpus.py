"""The corpus stage (docs/architecture.md): every corpus read or sampled into a stories table,
then split into sentences, under ``results/<corpus>/corpus/``; the downloads in
``resources/data/``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.sequentiality as sequentiality
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout, fill
from storyflow.plan.registry import rule_folders

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

#: The HIPPOCORPUS release, downloaded when no data mirror holds it.
HIPPOCORPUS_DOWNLOAD = "resources/data/hippocorpus/hippoCorpusV2.csv"
#: A book fetched because the mirror lacks it.
BOOK_DOWNLOAD = "resources/data/books/{genre}/{document_id}.txt"


def book_download(genre: str, document_id: str) -> str:
    """Where book ``document_id`` of ``genre`` is downloaded to."""
    return fill(BOOK_DOWNLOAD, genre=genre, document_id=document_id)


def check_names(config: Mapping[str, Any]) -> None:
    """A corpus of the user's (``corpora:``) may not bear the name of a stage or measure: its
    results folder ``results/<corpus>/`` would be that stage's ``results/<stage>/``."""
    taken = sorted(set(config["corpora"]) & set(rule_folders()))
    if taken:
        raise StoryflowError(
            f"config: corpora names {', '.join(repr(n) for n in taken)}, the name of a stage or "
            f"measure of the workflow ({', '.join(rule_folders())}): its results would mix with "
            "that stage's; rename the corpus"
        )


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """Each analysed corpus's sample counts (rule all)."""
    return [fill(SAMPLE_COUNTS, corpus=c) for c in sequentiality.corpora(config)]
