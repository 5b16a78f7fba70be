"""The book corpus: passages of the sampled books with their genre and point of view, their
counts, and passages for the narrative-sense reference."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from storyflow.errors import StoryflowError
from storyflow.progress import LoggedBar
from storyflow.seeds import item_rng
from storyflow.sentences import load_spacy, sentence_counts
from storyflow.settings import settings_from

if TYPE_CHECKING:
    from spacy.language import Language

from storyflow.corpora.books.manifest import read_book, read_manifest
from storyflow.corpora.books.passages import paragraphs, prose_problem, sample_passages
from storyflow.corpora.books.patterns import MANIFEST_COLUMNS, POV_LABELS
from storyflow.corpora.books.point_of_view import point_of_view

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------- corpus


@dataclass(frozen=True)
class PassageSettings:
    """Passage sampling and point-of-view settings (config ``books.passages`` and ``books.pov``;
    defaults and ranges: the config schema's)."""

    per_book: int
    sentences: int
    margin: float
    max_tries: int
    seed: int
    pov_genres: tuple[str, ...]
    first_rate: float
    third_rate: float

    @classmethod
    def from_config(
        cls, passages: Mapping[str, Any], pov: Mapping[str, Any], seed: int
    ) -> PassageSettings:
        """From the validated ``books.passages`` and ``books.pov`` blocks and the sample's
        seed."""
        return settings_from(
            cls,
            passages,
            where="books.passages and books.pov",
            seed=seed,
            pov_genres=pov["genres"],
            first_rate=pov["first_rate"],
            third_rate=pov["third_rate"],
        )


#: A passage's point of view: first person, third person, or neither clearly.


def passage_types(genres: Sequence[str], pov_genres: Sequence[str]) -> list[str]:
    """Every story type passages of ``genres`` can have (genres split by point of view)."""
    return [
        passage_type(g, pov, pov_genres)
        for g in genres
        for pov in POV_LABELS
        if g in pov_genres or pov == POV_LABELS[0]
    ]


def passage_type(genre: str, pov: str, pov_genres: Sequence[str]) -> str:
    """The passage's group (``story_type``): ``<genre>-<pov>`` for genres split by POV."""
    return f"{genre}-{pov}" if genre in pov_genres else genre


def _book_passages(
    book: Any, nlp: Language, settings: PassageSettings, extra: Sequence[str]
) -> tuple[list[dict[str, object]], list[tuple[str, int, str]]]:
    """One book's passages (``book``: a manifest row), sampled with the book's own seed and
    labelled with their point of view: the passage rows of :func:`build_passages` (with the
    manifest's ``extra`` columns) and their sentence rows."""
    text = read_book(book.path)
    rng = item_rng(settings.seed, book.document_id)
    found = sample_passages(
        text,
        nlp,
        n_passages=settings.per_book,
        n_sentences=settings.sentences,
        margin=settings.margin,
        rng=rng,
        max_tries=settings.max_tries,
    )
    rows: list[dict[str, object]] = []
    sentence_rows: list[tuple[str, int, str]] = []
    for k, passage in enumerate(found, start=1):
        pov = point_of_view(
            passage.sentences,
            first_rate=settings.first_rate,
            third_rate=settings.third_rate,
            paragraph_starts=passage.paragraph_starts,
        )
        story_id = f"{book.document_id}-p{k}"
        rows.append(
            {
                "story_id": story_id,
                "story_type": passage_type(book.genre, pov.label, settings.pov_genres),
                "document_id": str(book.document_id),
                "genre": book.genre,
                "pov": pov.label,
                "first_person_rate": pov.first_rate,
                "third_person_rate": pov.third_rate,
                "narration_words": pov.narration_words,
                "start_char": passage.start,
                "topic": None,
                "has_topic": False,
                "text": " ".join(passage.sentences),
                **{c: getattr(book, c) for c in extra if c.isidentifier()},
            }
        )
        sentence_rows.extend((story_id, i, s) for i, s in enumerate(passage.sentences))
    return rows, sentence_rows


def build_passages(
    books: pd.DataFrame, nlp: Language, settings: PassageSettings
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sample passages from every book and label them.

    Args:
        books: Selected manifest rows (:func:`select_books`); ``path`` must exist.
        nlp: spaCy pipeline that sets sentence boundaries.
        settings: Sampling and POV settings; book ``k`` uses the seed ``[seed, k-th id hash]``
            so adding books does not change other books' passages.

    Returns:
        ``(passages, sentences)``. ``passages``: one row per passage, ``story_id``
        (``<book>-p<k>``), ``story_type`` (:func:`passage_type`), ``document_id``, ``genre``,
        ``pov``, ``first_person_rate`` and ``third_person_rate`` (per 100 narration words),
        ``narration_words``, ``start_char`` (offset in the book file), ``topic`` (empty: books
        have no topic), ``text`` (the sentences joined by spaces), then the manifest's other
        columns. ``sentences``: ``story_id, sentence_idx, text`` like
        :func:`storyflow.sentences.split_sentences`.
    """
    rows: list[dict[str, object]] = []
    sentence_rows: list[tuple[str, int, str]] = []
    extra = [c for c in books.columns if c not in MANIFEST_COLUMNS]
    short: list[str] = []
    progress = LoggedBar(
        books.itertuples(index=False),
        total=len(books),
        desc="sampling passages",
        unit="book",
        file=sys.stderr,
        mininterval=5.0,
    )
    for book in progress:
        book_rows, book_sentences = _book_passages(book, nlp, settings, extra)
        if len(book_rows) < settings.per_book:
            short.append(f"{book.document_id} ({len(book_rows)})")
        rows.extend(book_rows)
        sentence_rows.extend(book_sentences)
    if short:
        log.warning(
            "%d book(s) gave fewer than %d passages of %d prose sentences (passages found): %s",
            len(short),
            settings.per_book,
            settings.sentences,
            ", ".join(short),
        )
    if not rows:
        raise StoryflowError("no book gave a passage: check books.passages and the book files")
    passages = pd.DataFrame(rows)
    sentences = pd.DataFrame(sentence_rows, columns=["story_id", "sentence_idx", "text"])
    return passages, sentences.astype({"sentence_idx": "int64"})


def passage_counts(
    manifest: pd.DataFrame, books: pd.DataFrame, passages: pd.DataFrame
) -> pd.DataFrame:
    """Books and passages per group: ``genre, story_type, n_books_in_manifest, n_books_sampled,
    n_books, n_passages`` (``n_books``: sampled books with a passage in the group)."""
    in_manifest = manifest.groupby("genre").size()
    sampled = books.groupby("genre").size()
    counts = (
        passages.groupby(["genre", "story_type"])
        .agg(n_books=("document_id", "nunique"), n_passages=("story_id", "size"))
        .reset_index()
    )
    counts.insert(2, "n_books_in_manifest", counts["genre"].map(in_manifest).astype(int))
    counts.insert(3, "n_books_sampled", counts["genre"].map(sampled).astype(int))
    return counts


def pov_agreement(passages: pd.DataFrame, hint_column: str | None) -> pd.DataFrame:
    """Passage POV labels against a manifest hint column whose text starts with first/third.

    Returns:
        ``genre, hint, pov, n_passages``: how the labels fall per hinted point of view.
    """
    if not hint_column or hint_column not in passages.columns:
        return pd.DataFrame(columns=["genre", "hint", "pov", "n_passages"])
    hint = passages[hint_column].str.extract(r"^\s*(first|third)", flags=re.I)[0].str.lower()
    table = passages.assign(hint=hint.fillna("other"))
    return table.groupby(["genre", "hint", "pov"]).size().rename("n_passages").reset_index()


def pov_table(passages: pd.DataFrame, hint_column: str | None) -> pd.DataFrame:
    """One row per passage for checking point of view by hand: ``story_id, document_id, genre,
    hint`` (the manifest's hint, if any), ``pov``, the two pronoun rates (per 100 narration
    words), ``narration_words`` and ``opening`` (the passage's first 200 characters)."""
    hint = passages[hint_column] if hint_column and hint_column in passages else ""
    return pd.DataFrame(
        {
            "story_id": passages["story_id"],
            "document_id": passages["document_id"],
            "genre": passages["genre"],
            "hint": hint,
            "pov": passages["pov"],
            "first_person_rate": passages["first_person_rate"].round(3),
            "third_person_rate": passages["third_person_rate"].round(3),
            "narration_words": passages["narration_words"],
            "opening": passages["text"].str.slice(0, 200),
        }
    )


@dataclass(frozen=True)
class PassageTables:
    """The tables of the passage sample (rule ``sample_passages``): ``stories``
    (:func:`build_passages`'s passages), ``sentences``, ``counts`` (sentences per passage,
    :func:`storyflow.sentences.sentence_counts`), ``sample`` (:func:`passage_counts`) and
    ``pov`` (:func:`pov_table`)."""

    stories: pd.DataFrame
    sentences: pd.DataFrame
    counts: pd.DataFrame
    sample: pd.DataFrame
    pov: pd.DataFrame


@dataclass(frozen=True)
class PassageSampleSettings:
    """What the passage sample depends on (rule ``sample_passages``'s params,
    :func:`storyflow.plan.corpus.passage_settings`).

    Attributes:
        columns: ``books.columns``: ``id``, ``genre``, ``path`` (or None: ``path_template``)
            and ``pov_hint`` (a manifest column hinting the point of view, or None).
        path_template: A book's text file relative to the manifest, when ``columns["path"]``
            is None.
        passages: From ``books.passages`` (``per_book``, ``sentences``, ``margin``,
            ``max_tries``), ``books.pov`` (``genres`` split by point of view, ``first_rate``,
            ``third_rate``) and ``books.sample.seed``.
    """

    columns: Mapping[str, str | None]
    path_template: str
    passages: PassageSettings

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> PassageSampleSettings:
        """From the rule's params: ``columns``, ``path_template``, the ``passages`` and
        ``pov`` blocks and the sample's ``seed``."""
        passages = PassageSettings.from_config(params["passages"], params["pov"], params["seed"])
        return settings_from(cls, params, where="books", passages=passages)


def sample_book_passages(
    manifest_path: str | Path,
    book_paths: Sequence[str | Path],
    ids: Sequence[str],
    settings: PassageSampleSettings,
    spacy_model: str,
) -> PassageTables:
    """Prose passages of the sampled books, split into sentences and labelled with their point
    of view (rule ``sample_passages``; the counts and the POV check are logged).

    Args:
        manifest_path: The book manifest (:func:`read_manifest`).
        book_paths: The text files of the books ``ids``, in the same order.
        ids: The sampled books' ids.
        settings: The manifest's columns, the books' path template and the passages' settings.
        spacy_model: The spaCy pipeline that splits the passages into sentences.
    """
    columns = settings.columns
    manifest = read_manifest(
        manifest_path,
        id_column=str(columns["id"]),  # id and genre: required column names
        genre_column=str(columns["genre"]),
        path_column=columns["path"],
        path_template=settings.path_template,
    )
    chosen = manifest.set_index("document_id").loc[list(ids)].reset_index()
    chosen["path"] = list(book_paths)
    table, sents = build_passages(chosen, load_spacy(spacy_model), settings.passages)
    result = PassageTables(
        stories=table,
        sentences=sents,
        counts=sentence_counts(sents, table),
        sample=passage_counts(manifest, chosen, table),
        pov=pov_table(table, columns["pov_hint"]),
    )
    for row in result.sample.itertuples(index=False):
        log.info("%s: %d passages from %d books", row.story_type, row.n_passages, row.n_books)
    if columns["pov_hint"]:
        for row in pov_agreement(table, columns["pov_hint"]).itertuples(index=False):
            log.info(
                "POV check: %s hinted %s -> %s: %d passages",
                row.genre,
                row.hint,
                row.pov,
                row.n_passages,
            )
    return result


def book_passages(books: pd.DataFrame, *, per_book: int, tokens: int, seed: int) -> pd.DataFrame:
    """Passages of ``tokens`` whitespace-separated words of consecutive prose from each book.

    A book's prose paragraphs (:func:`prose_problem` is None) are joined in
    order and cut into consecutive chunks of ``tokens`` words; ``per_book`` chunks are drawn
    without replacement (``storyflow.seeds.item_rng(seed, book id)``). ``books`` has
    ``document_id``, ``genre``, ``path``. Returns story_id, group, text, group = genre.
    The lemmatizer then keeps the first ``tokens`` word tokens (:func:`lemmatize`).
    """
    rows = []
    for book in books.itertuples(index=False):
        words = " ".join(
            p.text for p in paragraphs(read_book(book.path)) if prose_problem(p) is None
        ).split()
        n_chunks = len(words) // tokens
        rng = item_rng(seed, book.document_id)
        chosen = np.sort(rng.choice(n_chunks, size=min(per_book, n_chunks), replace=False))
        rows += [
            (f"{book.document_id}-{k}", book.genre, " ".join(words[k * tokens : (k + 1) * tokens]))
            for k in chosen
        ]
    return pd.DataFrame(rows, columns=["story_id", "group", "text"])
