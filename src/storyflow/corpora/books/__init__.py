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

from storyflow.corpora.books.corpus import (
    PassageSampleSettings,
    PassageSettings,
    PassageTables,
    book_passages,
    build_passages,
    passage_counts,
    passage_type,
    passage_types,
    pov_agreement,
    pov_table,
    sample_book_passages,
)
from storyflow.corpora.books.manifest import (
    download_books,
    gutenberg_body,
    read_book,
    read_manifest,
    select_books,
)
from storyflow.corpora.books.passages import (
    Paragraph,
    Passage,
    paragraphs,
    prose_problem,
    sample_passages,
)
from storyflow.corpora.books.patterns import (
    FIRST_PERSON,
    MANIFEST_COLUMNS,
    POV_LABELS,
    THIRD_PERSON,
)
from storyflow.corpora.books.point_of_view import (
    PointOfView,
    narration,
    point_of_view,
)

__all__ = [
    "FIRST_PERSON",
    "MANIFEST_COLUMNS",
    "POV_LABELS",
    "THIRD_PERSON",
    "Paragraph",
    "Passage",
    "PassageSampleSettings",
    "PassageSettings",
    "PassageTables",
    "PointOfView",
    "book_passages",
    "build_passages",
    "download_books",
    "gutenberg_body",
    "narration",
    "paragraphs",
    "passage_counts",
    "passage_type",
    "passage_types",
    "point_of_view",
    "pov_agreement",
    "pov_table",
    "prose_problem",
    "read_book",
    "read_manifest",
    "sample_book_passages",
    "sample_passages",
    "select_books",
]
