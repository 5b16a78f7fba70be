"""The corpus stage (docs/architecture.md): every corpus read or sampled into a stories table,
then split into sentences, under ``results/<corpus>/corpus/``; the downloads in
``resources/data/``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

import storyflow.plan.sequentiality as sequentiality
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout, each_corpus, fill
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


def selected_books(config: Mapping[str, Any]) -> pd.DataFrame | None:
    """The books of the sample (None when ``books.enabled`` is off): the manifest's rows that
    ``books.sample`` draws (:func:`storyflow.corpora.books.select_books`), each with ``source``,
    its file in the data mirror, or where rule ``download_book`` puts it (``fetched``: not in
    the mirror). Read when the workflow is planned: the sample decides the book jobs.

    Raises:
        StoryflowError: a data mirror is set and lacks books of the sample (named).
    """
    from pathlib import Path

    from storyflow.corpora import configured_path
    from storyflow.corpora.books import read_manifest, select_books

    books = config["books"]
    if not books["enabled"]:
        return None
    columns = books["columns"]
    manifest = read_manifest(
        str(configured_path(config, "books")),
        id_column=columns["id"],
        genre_column=columns["genre"],
        path_column=columns["path"],
        path_template=books["path_template"],
    )
    chosen = select_books(manifest, books["sample"]["per_genre"], books["sample"]["seed"])
    fetched = [book_download(g, i) for g, i in zip(chosen.genre, chosen.document_id, strict=True)]
    chosen["fetched"] = [not Path(p).is_file() for p in chosen.path]
    chosen["source"] = [
        f if missing else p
        for p, f, missing in zip(chosen.path, fetched, chosen.fetched, strict=True)
    ]
    absent = list(chosen.path[chosen.fetched])
    if config["data"]["mirror"] and absent:
        raise StoryflowError(
            f"{len(absent)} book(s) of the sample are not in the data mirror "
            f"({config['data']['mirror']}); looked for: {', '.join(absent[:5])}"
            + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")
            + ". Fix data.mirror, add the files, or set data.mirror to null to download them."
        )
    return chosen


def hippocorpus_sample(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the HIPPOCORPUS sample depends on: the story types kept and the sample's
    ``fraction`` or ``per_type`` and ``seed`` (``hippocorpus``)."""
    block = config["hippocorpus"]
    return {"story_types": block["story_types"], **block["sample"]}


def book_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the book passages depend on (``books``): the manifest's ``columns``, the
    ``passages`` block, the point-of-view detection ``pov``, the sample's ``seed``, and where a
    book missing from the mirror is fetched (``path_template``, ``url``)."""
    books = config["books"]
    return {
        "columns": books["columns"],
        "passages": books["passages"],
        "pov": books["pov"],
        "seed": books["sample"]["seed"],
        "path_template": books["path_template"],
        "url": books["url"],
    }


def passage_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the passage sample depends on (rule ``sample_passages``'s params;
    :class:`storyflow.corpora.books.PassageSampleSettings`): :func:`book_settings` but where a
    book missing from the mirror is fetched from."""
    return {key: value for key, value in book_settings(config).items() if key != "url"}


def user_corpora(config: Mapping[str, Any]) -> list[str]:
    """The user's CSV corpora (the names under ``corpora``), in config order."""
    return list(config["corpora"])


def user_columns(config: Mapping[str, Any], corpus: str) -> dict[str, Any] | None:
    """The column names of a user's CSV corpus (``corpora.<corpus>.columns``); None for a
    corpus that is not a user's."""
    entry = config["corpora"].get(corpus)
    return None if entry is None else entry["columns"]


def story_sample(config: Mapping[str, Any], corpus: str) -> Any:
    """How a sampled corpus (HANNA, ROCStories) is drawn: ``stories.<corpus>``."""
    return config["stories"][corpus]


def uses_mirror(config: Mapping[str, Any]) -> bool:
    """Whether the corpora are read from a data mirror (``data.mirror`` set)."""
    return bool(config["data"]["mirror"])


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
    return each_corpus(sequentiality.corpora(config), SAMPLE_COUNTS)
