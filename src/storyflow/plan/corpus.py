"""The corpus stage (docs/architecture.md): every corpus read or sampled into a stories table,
then split into sentences, under ``results/<corpus>/corpus/``; the downloads in
``resources/data/``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

import storyflow.plan.corpus_files as corpus_files
import storyflow.plan.sequentiality as sequentiality
from storyflow.corpora import configured_path, corpus_kind
from storyflow.errors import StoryflowError
from storyflow.plan.layout import each_corpus, fill
from storyflow.plan.registry import rule_folders

# The corpus stage's files, named once in storyflow.plan.corpus_files (which a measure's planning
# module reads without this module); the rules name them here.
OUT, STORIES, SENTENCES = corpus_files.OUT, corpus_files.STORIES, corpus_files.SENTENCES
SENTENCE_COUNTS, SAMPLE_COUNTS = corpus_files.SENTENCE_COUNTS, corpus_files.SAMPLE_COUNTS
EXCLUDED_STORIES, POINT_OF_VIEW = corpus_files.EXCLUDED_STORIES, corpus_files.POINT_OF_VIEW

#: The HIPPOCORPUS release, downloaded when no data mirror holds it.
HIPPOCORPUS_DOWNLOAD = "resources/data/hippocorpus/hippoCorpusV2.csv"
#: A book fetched because the mirror lacks it.
BOOK_DOWNLOAD = "resources/data/books/{genre}/{document_id}.txt"


def book_download(genre: str, document_id: str) -> str:
    """Where book ``document_id`` of ``genre`` is downloaded to."""
    return fill(BOOK_DOWNLOAD, genre=genre, document_id=document_id)


def selected_books(config: Mapping[str, Any]) -> pd.DataFrame | None:
    """The books of the sample: the manifest's rows that ``books.sample`` draws
    (:func:`storyflow.corpora.books.select_books`), each with ``source``, its file in the data
    mirror, or where rule ``download_books`` puts it (``fetched``: not in the mirror). Read when
    the workflow is planned, as the sample decides the book jobs; None when ``books.enabled``
    is off or the manifest is not there (:func:`missing_data` says so when a job that reads the
    books is planned, so that linting and plans without the books need no manifest).

    Raises:
        StoryflowError: the manifest is there but wrong (a missing column, a repeated id...).
    """
    from storyflow.corpora.books import read_manifest, select_books

    books = config["books"]
    manifest_path = configured_path(config, "books")
    if not books["enabled"] or not manifest_path.is_file():
        return None
    columns = books["columns"]
    manifest = read_manifest(
        str(manifest_path),
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
    return chosen


@dataclass(frozen=True)
class DataFile:
    """The file a corpus is read from, as the config names it: ``key``, the config key that
    names it (the books' manifest for the books); ``path``, where it is looked for (inside
    ``data.mirror`` unless absolute; with no mirror, relative to the working directory);
    ``downloaded``: whether a rule downloads it when there is no mirror (HIPPOCORPUS)."""

    corpus: str
    description: str
    key: str
    path: Path
    downloaded: bool


def data_file(config: Mapping[str, Any], corpus: str) -> DataFile:
    """Corpus ``corpus``'s file (the corpus registry's ``path_key``)."""
    kind = corpus_kind(config, corpus)
    key = ".".join(corpus if part == "<name>" else part for part in kind.path_key)
    return DataFile(
        corpus,
        kind.description,
        key,
        configured_path(config, corpus),
        kind.downloaded and not uses_mirror(config),
    )


def missing_data(
    config: Mapping[str, Any], corpus: str, books: pd.DataFrame | None = None
) -> str | None:
    """What corpus ``corpus`` lacks before its jobs can run, in one line naming the file, the
    config key and where to put it; None when nothing is missing. A file is missing when it is
    not there and no rule downloads it: with ``data.mirror`` set, every file must be in the
    mirror (a misspelt mirror never turns into a download); with no mirror, HIPPOCORPUS and
    the sampled books are downloaded, every other file is read where the config says, relative
    to the working directory. ``books``: :func:`selected_books` (the sampled books, whose files
    must be in a mirror that is set)."""
    mirror = config["data"]["mirror"]
    wanted = data_file(config, corpus)
    if not wanted.path.is_file() and not wanted.downloaded:
        what = "manifest" if corpus == "books" else "file"
        line = f"{corpus} ({wanted.description}): its {what}, config {wanted.key}, is not at "
        if mirror and corpus_kind(config, corpus).kind != "csv":
            line += f"{wanted.path}; fix data.mirror or {wanted.key}, or put the file there"
            if corpus_kind(config, corpus).downloaded:
                line += ", or set data.mirror to null to download the official release"
        else:
            line += f"{wanted.path}; put it there or set {wanted.key} to where it is"
        if corpus == "books":
            line += (
                "; or leave the books out: books.enabled: false, and books out of every "
                "measure's corpora"
            )
        return line
    if corpus == "books" and books is not None and mirror:
        absent = list(books.path[books.fetched])
        if absent:
            return (
                f"books: {len(absent)} book(s) of the sample are not in the data mirror "
                f"({mirror}); looked for: {', '.join(absent[:5])}"
                + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")
                + ". Fix data.mirror, add the files, or set data.mirror to null to download them."
            )
    return None


def data_problem(
    config: Mapping[str, Any],
    needed: Iterable[str],
    others: Iterable[str] = (),
    books: pd.DataFrame | None = None,
) -> str | None:
    """The message that stops a run whose ``needed`` corpora lack a file
    (:func:`missing_data`), one line per corpus, naming as well every corpus of ``others``
    (the config's other corpora) that lacks one, so that one message says everything to put in
    place; None when no corpus of ``needed`` lacks anything."""
    needed = list(dict.fromkeys(needed))
    first = [line for c in needed if (line := missing_data(config, c, books))]
    if not first:
        return None
    rest = [
        line
        for c in dict.fromkeys(others)
        if c not in needed and (line := missing_data(config, c, books))
    ]
    mirror = config["data"]["mirror"]
    if mirror:
        where = f"not in the data mirror (data.mirror: {mirror!r}"
    else:
        where = (
            "missing (data.mirror is null: each file is read where its config key says, and only "
            "HIPPOCORPUS and the sampled books are downloaded"
        )
    where += f"; a relative path is relative to the working directory {Path.cwd()})"
    text = f"the data this run reads is {where}:\n  - " + "\n  - ".join(first)
    if rest:
        text += "\nThe config's other corpora lack theirs too:\n  - " + "\n  - ".join(rest)
    return text


def hippocorpus_sample(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the HIPPOCORPUS sample depends on: the story types kept and the sample's
    ``fraction`` or ``per_type``, ``seed`` and ``paired`` (``hippocorpus``)."""
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
    results folder ``results/<corpus>/`` would be that stage's ``results/<stage>/``. Nor may a
    corpus or a contrast bear a name that is no part of a path
    (:func:`storyflow.path_names.check_path_name`: ``..``, a leading dot)."""
    from storyflow.path_names import check_path_name
    from storyflow.plan.contrasts import contrasts

    for corpus in config["corpora"]:
        check_path_name(str(corpus), f"corpora.{corpus}", "results/<corpus>/")
    for corpus in [*config["corpora"], "hippocorpus", "books"]:
        if corpus in config["corpora"] or "contrasts" in (config.get(corpus) or {}):
            for i, contrast in enumerate(contrasts(config, corpus)):
                key = f"{'corpora.' if corpus in config['corpora'] else ''}{corpus}.contrasts[{i}]"
                check_path_name(
                    str(contrast.get("name", "")), f"{key}.name", "the contrast's table files"
                )
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
