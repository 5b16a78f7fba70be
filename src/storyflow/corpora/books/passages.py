"""Prose passages of a book (the module docstring of :mod:`storyflow.corpora.books`): paragraphs,
which of them are prose, and passages of consecutive sentences from the middle of the book."""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from spacy.language import Language

from storyflow.corpora.books.patterns import BRACKETED, HEADING, SENTENCE_END, TOC_LINE

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
    if BRACKETED.search(text):
        return "bracketed note, illustration or footnote"
    if len(paragraph.lines) <= 2 and HEADING.search(paragraph.lines[0].strip()):
        return "heading"
    if sum(c.isupper() for c in letters) > 0.5 * len(letters):
        return "capitals (heading or title)"
    if sum(bool(TOC_LINE.search(line)) for line in paragraph.lines) > len(paragraph.lines) / 2:
        return "table of contents or index"
    if len(paragraph.lines) >= 3:
        lengths = sorted(len(line.strip()) for line in paragraph.lines[:-1])
        if lengths[len(lengths) // 2] < 45:
            return "short lines (verse, list or table)"
        indented = sum(line.startswith((" ", "\t")) for line in paragraph.lines)
        if indented > len(paragraph.lines) / 2:
            return "indented block (verse, letter heading or table)"
    if not SENTENCE_END.search(text):
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
        passage = _passage_from(first, blocks, sentences_of, prose - used, n_sentences)
        if passage is None:
            continue
        taken.append(passage)
        used |= set(range(first, passage.last_paragraph + 1))
    return sorted(taken, key=lambda p: p.start)


def _passage_from(
    first: int,
    blocks: Sequence[Paragraph],
    sentences_of: Callable[[int], list[str]],
    free: Container[int],
    n_sentences: int,
) -> Passage | None:
    """The passage of ``n_sentences`` sentences that starts at paragraph ``first`` and runs
    through the following ``free`` paragraphs (prose, not used yet), or None when they end
    first. ``sentences_of``: a paragraph's sentences, by index."""
    collected: list[str] = []
    starts: list[int] = []
    last = first
    while len(collected) < n_sentences and last in free:
        starts.append(len(collected))
        collected.extend(sentences_of(last))
        last += 1
    if len(collected) < n_sentences:
        return None
    return Passage(
        blocks[first].start,
        first,
        last - 1,
        tuple(collected[:n_sentences]),
        tuple(starts),
    )
