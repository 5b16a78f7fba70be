"""The manifest of books (one row per book: id, genre, file) and the books' text: read, sampled
per genre, downloaded from Project Gutenberg when absent, stripped of its licence."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from storyflow.corpora.base import read_utf8, require_header
from storyflow.corpora.download import DownloadError, fetch
from storyflow.errors import InputDataError, StoryflowError

if TYPE_CHECKING:
    pass

from storyflow.corpora.books.patterns import MANIFEST_COLUMNS

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------- manifest


def read_manifest(
    path: str | Path,
    *,
    id_column: str,
    genre_column: str,
    path_template: str,
    path_column: str | None = None,
) -> pd.DataFrame:
    """Read a book manifest (TSV if the name ends in ``.tsv``, else CSV) and check it.

    Args:
        path: The manifest file.
        id_column: Column with each book's id (unique; e.g. ``gutenberg_id``).
        genre_column: Column with each book's genre / category label.
        path_column: Column with each book's text file, relative to the manifest's folder (or
            absolute). When None, ``path_template`` builds it from ``{id}`` and ``{genre}``.
        path_template: Relative path of a book's text file.

    Returns:
        One row per book: ``document_id`` (str), ``genre`` (str), ``path`` (str, absolute) and the
        manifest's other columns unchanged (as text).

    Raises:
        InputDataError: the file is missing or unreadable, a column is missing, or a row has an
            empty id or genre or repeats an id (the message names the row).
    """
    path = Path(path)
    if not path.is_file():
        raise InputDataError(path, "file not found (the book manifest, config books.manifest)")
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    text = read_utf8(path)  # UTF-8, or what a byte-order mark names; else the iconv command
    try:
        table = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise InputDataError(path, f"not a readable manifest ({err})") from None
    required = [id_column, genre_column] + ([path_column] if path_column else [])
    require_header(table, required, path, "Name the manifest's columns in books.columns.")
    for column in (id_column, genre_column):
        empty = table.index[table[column].str.strip() == ""].tolist()
        if empty:
            raise InputDataError(path, f"empty {column!r}", row=empty[0] + 2)
    repeated = table.index[table[id_column].duplicated()].tolist()
    if repeated:
        book = table.at[repeated[0], id_column]
        raise InputDataError(path, f"book id {book!r} appears more than once", row=repeated[0] + 2)
    books = table.rename(columns={id_column: "document_id", genre_column: "genre"})
    if path_column:
        relative = books[path_column]
    else:
        relative = pd.Series(
            [
                path_template.format(id=i, genre=g)
                for i, g in zip(books.document_id, books.genre, strict=True)
            ],
            index=books.index,
        )
    books["path"] = [str((path.parent / rel).resolve()) for rel in relative]
    other = [c for c in books.columns if c not in MANIFEST_COLUMNS]
    return books[[*MANIFEST_COLUMNS, *other]].reset_index(drop=True)


def select_books(
    manifest: pd.DataFrame, per_genre: int | Mapping[str, int] | None, seed: int
) -> pd.DataFrame:
    """A seeded random sample of books per genre, in manifest order.

    Args:
        manifest: Output of :func:`read_manifest`.
        per_genre: Books to keep per genre: one number for all, a mapping genre → number (genres
            not named are left out), or None for every book.
        seed: Seed of the sample (the same seed gives the same books).

    Raises:
        StoryflowError: ``per_genre`` names a genre the manifest lacks.
    """
    if per_genre is None:
        return manifest.reset_index(drop=True)
    genres = sorted(manifest["genre"].unique())
    wanted = dict.fromkeys(genres, per_genre) if isinstance(per_genre, int) else dict(per_genre)
    unknown = sorted(set(wanted) - set(genres))
    if unknown:
        raise StoryflowError(
            f"books.sample.per_genre names genre(s) {unknown} absent from the manifest; "
            f"genres present: {genres}"
        )
    rng = np.random.default_rng(seed)
    keep: list[int] = []
    for genre in sorted(wanted):
        rows = manifest.index[manifest["genre"] == genre].to_numpy()
        n = min(int(wanted[genre]), rows.size)
        keep.extend(rng.choice(rows, size=n, replace=False).tolist())
    return manifest.loc[sorted(keep)].reset_index(drop=True)


def gutenberg_body(text: str) -> str:
    """The book between Project Gutenberg's ``*** START OF`` and ``*** END OF`` lines."""
    start = re.search(r"^\*\*\* ?START OF.*$", text, re.M)
    end = re.search(r"^\*\*\* ?END OF.*$", text, re.M)
    return text[start.end() if start else 0 : end.start() if end else len(text)].strip() + "\n"


def download_books(books: pd.DataFrame, destinations: Sequence[str], url_template: str) -> None:
    """Fetch books by id (``url_template`` with ``{id}``), strip the Gutenberg header and licence.

    Raises:
        StoryflowError: one message naming every book that could not be fetched, with where to
            put its text file by hand.
    """
    failed = []
    for book, dest in zip(books.itertuples(index=False), destinations, strict=True):
        url = url_template.format(id=book.document_id)
        try:
            fetch(url, dest, hint="", transform=_gutenberg_file)
        except DownloadError as err:
            failed.append(
                f"  {book.document_id} ({book.genre}): {url} failed ({err.cause}); put it at {dest}"
            )
            continue
        log.info("fetched book %s from %s", book.document_id, url)
    if failed:
        raise StoryflowError(
            f"{len(failed)} book(s) are neither in the data mirror nor downloadable (offline?):\n"
            + "\n".join(failed)
            + "\nPlace the plain-text files there (or set data.mirror to a folder holding the "
            "manifest's books) and run again."
        )


def _gutenberg_file(raw: Path, out: Path) -> None:
    """The downloaded book, decoded, without Project Gutenberg's header and licence."""
    text = raw.read_bytes().decode("utf-8-sig", errors="replace")
    out.write_text(gutenberg_body(text), encoding="utf-8")


def read_book(path: str | Path) -> str:
    """A book's text (UTF-8; a byte-order mark is dropped, undecodable bytes replaced)."""
    try:
        return Path(path).read_bytes().decode("utf-8-sig", errors="replace")
    except FileNotFoundError:
        raise InputDataError(path, "book file not found (listed in the manifest)") from None
