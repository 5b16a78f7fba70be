"""Book corpora: a manifest of labelled documents, prose passages, and point of view.

The published-genres regime (``docs/method.md`` section 4) compares passages of books: fiction
against non-fiction with point of view matched. Any corpus of plain-text books plugs in through a
manifest (a TSV or CSV: one row per book, an id column, a genre column, any extra columns) and
the config; ``../shared/data/books`` (Project Gutenberg stand-ins for CONLIT) is the default.

Passage sampling (:func:`sample_passages`), in words:

1. The book is cut into paragraphs at blank lines; a paragraph's hard-wrapped lines are joined.
2. Only paragraphs that start inside the middle of the book count: not in the first or last
   ``margin`` (default 10 %) of its characters, where front and back matter live.
3. Each paragraph is prose or not (:func:`prose_problem`): headings (``CHAPTER IV``, all-capital
   lines, lines without sentence-final punctuation), tables of contents and indexes (dot leaders,
   lines ending in page numbers), verse and tables (several short lines), illustrations,
   footnotes and transcriber notes (bracketed) are not prose.
4. A passage is ``n_sentences`` consecutive sentences (spaCy) starting at the first sentence of
   a prose paragraph and running through following prose paragraphs only: a candidate that meets
   a non-prose paragraph (or the end of the middle part) before it has enough sentences is
   rejected. Start paragraphs are tried in a seeded random order; passages never overlap.

Point of view (:func:`point_of_view`): first- and third-person pronoun rates per 100 words of
narration, i.e. outside double quotation marks (dialogue is not narration). A passage is ``1P``
when its first-person singular rate (I, me, my, mine, myself) is at least ``first_rate``, else
``3P`` when its third-person rate (he, she, they and their forms) is at least ``third_rate``,
else ``unclear``.
"""

from __future__ import annotations

import io
import logging
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from storyflow.corpora.base import read_utf8, require_header
from storyflow.corpora.download import DownloadError, fetch
from storyflow.errors import InputDataError, StoryflowError
from storyflow.seeds import item_rng
from storyflow.sentences import load_spacy, sentence_counts
from storyflow.settings import settings_from

if TYPE_CHECKING:
    from spacy.language import Language

log = logging.getLogger(__name__)

#: Standard columns of the manifest table returned by :func:`read_manifest`.
MANIFEST_COLUMNS = ("document_id", "genre", "path")

FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
THIRD_PERSON = frozenset(
    {"he", "him", "his", "himself", "she", "her", "hers", "herself"}
    | {"they", "them", "their", "theirs", "themselves"}
)
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")
_HEADING = re.compile(
    r"^(chapter|book|part|volume|section|canto|letter|appendix|preface|contents|index|"
    r"introduction|epilogue|prologue)\b|^[ivxlcdm]+[.:]?$|^\d+[.:]?$",
    re.IGNORECASE,
)
_TOC_LINE = re.compile(r"(\.\s*){3,}|\s\d{1,4}\s*$")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$|[.!?][\"'”’)\]]*\s*--$")
_BRACKETED = re.compile(r"^\s*[\[{(<]|\[(illustration|footnote|transcriber|note)", re.IGNORECASE)


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


# ----------------------------------------------------------------------------- passages


@dataclass(frozen=True)
class Paragraph:
    """A blank-line-separated block: ``start`` = character offset in the book, its raw lines."""

    start: int
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.lines).split())


def paragraphs(text: str) -> list[Paragraph]:
    """The book's paragraphs (blocks between blank lines), with their character offsets."""
    blocks = []
    for match in re.finditer(r"(?:[^\n]*\S[^\n]*(?:\n|$))+", text):
        lines = tuple(line.rstrip() for line in match.group(0).splitlines() if line.strip())
        blocks.append(Paragraph(match.start(), lines))
    return blocks


def prose_problem(paragraph: Paragraph) -> str | None:
    """Why a paragraph is not narrative prose (None when it is). See the module docstring."""
    text = paragraph.text
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 20:
        return "too short"
    if _BRACKETED.search(text):
        return "bracketed note, illustration or footnote"
    if len(paragraph.lines) <= 2 and _HEADING.search(paragraph.lines[0].strip()):
        return "heading"
    if sum(c.isupper() for c in letters) > 0.5 * len(letters):
        return "capitals (heading or title)"
    if sum(bool(_TOC_LINE.search(line)) for line in paragraph.lines) > len(paragraph.lines) / 2:
        return "table of contents or index"
    if len(paragraph.lines) >= 3:
        lengths = sorted(len(line.strip()) for line in paragraph.lines[:-1])
        if lengths[len(lengths) // 2] < 45:
            return "short lines (verse, list or table)"
        indented = sum(line.startswith((" ", "\t")) for line in paragraph.lines)
        if indented > len(paragraph.lines) / 2:
            return "indented block (verse, letter heading or table)"
    if not _SENTENCE_END.search(text):
        return "no sentence-final punctuation"
    return None


@dataclass(frozen=True)
class Passage:
    """``sentences`` consecutive sentences; ``start``: character offset of the first paragraph;
    ``paragraph_starts``: indices of the sentences that open a paragraph (0 included)."""

    start: int
    first_paragraph: int
    last_paragraph: int
    sentences: tuple[str, ...]
    paragraph_starts: tuple[int, ...]


def sample_passages(
    text: str,
    nlp: Language,
    *,
    n_passages: int,
    n_sentences: int,
    margin: float,
    rng: np.random.Generator,
    max_tries: int = 200,
) -> list[Passage]:
    """Up to ``n_passages`` non-overlapping prose passages of ``n_sentences`` sentences each.

    Args:
        text: The book (plain text, paragraphs separated by blank lines).
        nlp: spaCy pipeline that sets sentence boundaries (:func:`storyflow.sentences.load_spacy`).
        n_passages: Passages wanted.
        n_sentences: Sentences per passage.
        margin: Share of the book's characters at each end where no passage may start or run
            (front and back matter), in [0, 0.5).
        rng: Random generator (seeded per book by the caller).
        max_tries: Candidate start paragraphs tried at most (each try runs spaCy on a few
            paragraphs).

    Returns:
        The passages found, in book order; fewer than ``n_passages`` when the book has too
        little prose (the caller records it).
    """
    blocks = paragraphs(text)
    low, high = margin * len(text), (1 - margin) * len(text)
    inside = [i for i, b in enumerate(blocks) if low <= b.start and b.start < high]
    prose = {i for i in inside if prose_problem(blocks[i]) is None}
    split: dict[int, list[str]] = {}

    def sentences_of(i: int) -> list[str]:
        if i not in split:
            doc = nlp(blocks[i].text)
            split[i] = [s for s in (" ".join(sent.text.split()) for sent in doc.sents) if s]
        return split[i]

    taken: list[Passage] = []
    used: set[int] = set()
    candidates = rng.permutation(sorted(prose))[:max_tries]
    for first in (int(i) for i in candidates):
        if len(taken) == n_passages:
            break
        collected: list[str] = []
        starts: list[int] = []
        last = first
        while len(collected) < n_sentences and last in prose and last not in used:
            starts.append(len(collected))
            collected.extend(sentences_of(last))
            last += 1
        if len(collected) < n_sentences:
            continue
        taken.append(
            Passage(
                blocks[first].start,
                first,
                last - 1,
                tuple(collected[:n_sentences]),
                tuple(starts),
            )
        )
        used |= set(range(first, last))
    return sorted(taken, key=lambda p: p.start)


# ----------------------------------------------------------------------------- point of view


@dataclass(frozen=True)
class PointOfView:
    """Pronoun rates per 100 narration words (outside double quotes) and the resulting label."""

    narration_words: int
    first_rate: float
    third_rate: float
    label: str


def narration(sentences: Sequence[str], paragraph_starts: Sequence[int] = (0,)) -> str:
    """The passage's text outside quotation marks (dialogue removed).

    Double quotes: a straight one (") toggles between narration and dialogue, curly ones open
    (“) and close (”). Single quotes (British dialogue, 'like this'): ``'`` or ``‘`` opens when it
    stands before a word (not after a letter or digit) and ``'`` or ``’`` closes after a word or
    punctuation and before a non-word character; any other ``'`` / ``’`` is an apostrophe
    (don't, Tom's) and stays. Every paragraph starts as narration: in many books a quotation
    running over paragraphs has no closing mark at the paragraph's end, and the reset keeps one
    such quote from turning the rest of the passage into "dialogue".
    """
    starts = set(paragraph_starts) | {0}
    kept: list[str] = []
    double = single = False
    for i, sentence in enumerate(sentences):
        if i in starts:
            double = single = False
        for j, char in enumerate(sentence):
            before = sentence[j - 1] if j else " "
            after = sentence[j + 1] if j + 1 < len(sentence) else " "
            if char == '"':
                double = not double
            elif char == "“":
                double = True
            elif char == "”":
                double = False
            elif char in "'‘’" and not double:
                opens = char != "’" and not before.isalnum() and after.isalpha()
                closes = char != "‘" and not after.isalnum() and not before.isspace()
                if single and closes:
                    single = False
                elif not single and opens:
                    single = True
                elif not single:
                    kept.append(char)
            elif not (double or single):
                kept.append(char)
        kept.append(" ")
    return "".join(kept)


def point_of_view(
    sentences: Sequence[str],
    *,
    first_rate: float,
    third_rate: float,
    paragraph_starts: Sequence[int] = (0,),
) -> PointOfView:
    """First- or third-person narration of a passage, from pronoun rates outside quotations.

    Args:
        sentences: The passage's sentences.
        paragraph_starts: Indices of the sentences that open a paragraph (see :func:`narration`).
        first_rate: Minimum first-person singular pronouns per 100 narration words for ``1P``.
        third_rate: Minimum third-person pronouns per 100 narration words for ``3P`` (checked
            when the passage is not ``1P``).

    Returns:
        Label ``1P``, ``3P`` or ``unclear``, with the rates it rests on.
    """
    text = narration(sentences, paragraph_starts)
    words = [w.lower().replace("’", "'") for w in _WORD.findall(text)]
    n = len(words)
    first = 100 * sum(w in FIRST_PERSON for w in words) / n if n else 0.0
    third = 100 * sum(w in THIRD_PERSON for w in words) / n if n else 0.0
    label = (
        POV_LABELS[0]
        if n and first >= first_rate
        else POV_LABELS[1]
        if n and third >= third_rate
        else POV_LABELS[2]
    )
    return PointOfView(n, first, third, label)


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
POV_LABELS = ("1P", "3P", "unclear")


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
    progress = tqdm(
        books.itertuples(index=False),
        total=len(books),
        desc="sampling passages",
        unit="book",
        file=sys.stderr,
        mininterval=5.0,
    )
    for book in progress:
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
        if len(found) < settings.per_book:
            short.append(f"{book.document_id} ({len(found)})")
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


def sample_book_passages(
    manifest_path: str | Path,
    book_paths: Sequence[str | Path],
    *,
    ids: Sequence[str],
    columns: Mapping[str, str | None],
    path_template: str,
    passages: Mapping[str, Any],
    pov: Mapping[str, Any],
    seed: int,
    spacy_model: str,
) -> PassageTables:
    """Prose passages of the sampled books, split into sentences and labelled with their point
    of view (rule ``sample_passages``; the counts and the POV check are logged).

    Args:
        manifest_path: The book manifest (:func:`read_manifest`).
        book_paths: The text files of the books ``ids``, in the same order.
        ids: The sampled books' ids.
        columns: ``books.columns``: ``id``, ``genre``, ``path`` (or None: ``path_template``)
            and ``pov_hint`` (a manifest column hinting the point of view, or None).
        path_template: A book's text file relative to the manifest, when ``columns["path"]``
            is None.
        passages: ``books.passages``: ``per_book``, ``sentences``, ``margin``, ``max_tries``.
        pov: ``books.pov``: ``genres`` (split by point of view), ``first_rate``,
            ``third_rate``.
        seed: ``books.sample.seed``.
        spacy_model: The spaCy pipeline that splits the passages into sentences.
    """
    manifest = read_manifest(
        manifest_path,
        id_column=columns["id"],
        genre_column=columns["genre"],
        path_column=columns["path"],
        path_template=path_template,
    )
    chosen = manifest.set_index("document_id").loc[list(ids)].reset_index()
    chosen["path"] = list(book_paths)
    settings = PassageSettings.from_config(passages, pov, seed)
    table, sents = build_passages(chosen, load_spacy(spacy_model), settings)
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
