"""The connective lexicon and its matcher: which explicit connective links a sentence to the one
before (docs/method.md §6)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from storyflow.errors import InputDataError, StoryflowError

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

from storyflow.measures.sequentiality.covariates.vocabulary import (
    CATEGORIES,
    CONSTRAINTS,
    RELATION_FLOW,
    VERB_POS,
)

# --------------------------------------------------------------------------------------------
# Connective lexicon


@dataclass(frozen=True)
class Connective:
    """One entry of the connective lexicon (``storyflow/data/connectives.tsv`` documents it)."""

    words: tuple[str, ...]
    category: str
    relation: str
    constraint: str
    pdtb_sense: str

    @property
    def text(self) -> str:
        return " ".join(self.words)


def default_lexicon_path() -> Path:
    """The packaged lexicon (PDTB 2.0 explicit connectives, see the file's header)."""
    return Path(str(resources.files("storyflow") / "data" / "connectives.tsv"))


def load_connectives(path: str | Path | None = None) -> list[Connective]:
    """Read a connective lexicon: tab-separated, ``#`` comment lines, a header row.

    Args:
        path: The TSV file; ``None`` = the packaged lexicon.

    Raises:
        InputDataError: a row has a wrong number of fields, an unknown category, relation or
            constraint, or repeats a connective (the message names the 1-based line).
    """
    path = Path(path) if path is not None else default_lexicon_path()
    if not path.is_file():
        raise StoryflowError(f"connective lexicon {path} does not exist")
    fields = ["connective", "category", "relation", "constraint", "pdtb_sense"]
    entries: list[Connective] = []
    seen: set[tuple[str, ...]] = set()
    header_seen = False
    with path.open(encoding="utf-8", newline="") as handle:
        for line_no, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or row[0].startswith("#"):
                continue
            if not header_seen:
                if row != fields:
                    raise InputDataError(path, f"header must be {fields}, found {row}", line_no)
                header_seen = True
                continue
            if len(row) != len(fields):
                raise InputDataError(path, f"expected {len(fields)} fields, found {row}", line_no)
            text, category, relation, constraint, sense = (v.strip() for v in row)
            words = tuple(text.lower().split())
            problem = (
                "empty connective"
                if not words
                else f"unknown category {category!r} (use {', '.join(CATEGORIES)})"
                if category not in CATEGORIES
                else f"unknown relation {relation!r} (use {', '.join(RELATION_FLOW)})"
                if relation not in RELATION_FLOW
                else f"unknown constraint {constraint!r} (use {', '.join(sorted(CONSTRAINTS))})"
                if constraint not in CONSTRAINTS
                else f"connective {text!r} listed twice"
                if words in seen
                else None
            )
            if problem:
                raise InputDataError(path, problem, line_no)
            seen.add(words)
            entries.append(Connective(words, category, relation, constraint, sense))
    if not entries:
        raise InputDataError(path, "the lexicon has no entries")
    return entries


@dataclass(frozen=True)
class ConnectiveMatch:
    """A connective found in a sentence: the entry, its first token and whether it opens it."""

    connective: Connective
    token: Token
    onset: bool


def _onset_index(doc: Doc) -> int | None:
    """Index of the sentence's first word (leading punctuation such as quotes skipped)."""
    return next((t.i for t in doc if not (t.is_punct or t.is_space)), None)


def _constraint_holds(token: Token, constraint: str, onset: bool) -> bool:
    if constraint == "any":
        return True
    if constraint == "mark":
        return token.dep_ == "mark"
    if constraint == "verbal":
        return token.head is not token and token.head.pos_ in VERB_POS
    if constraint == "cc":
        return token.dep_ == "cc" or onset
    return onset  # "onset"


class ConnectiveMatcher:
    """Finds the lexicon's connectives in a parsed sentence (longest match first, no overlaps)."""

    def __init__(self, lexicon: Iterable[Connective]) -> None:
        self.lexicon = list(lexicon)
        by_first: dict[str, list[Connective]] = {}
        for entry in self.lexicon:
            by_first.setdefault(entry.words[0], []).append(entry)
        self._by_first = {k: sorted(v, key=lambda e: -len(e.words)) for k, v in by_first.items()}

    def find(self, doc: Doc) -> list[ConnectiveMatch]:
        """Connectives of ``doc`` in text order; a word belongs to at most one match."""
        words = [t.lower_ for t in doc]
        onset = _onset_index(doc)
        found: list[ConnectiveMatch] = []
        i = 0
        while i < len(words):
            for entry in self._by_first.get(words[i], ()):
                n = len(entry.words)
                at_onset = i == onset
                if tuple(words[i : i + n]) == entry.words and _constraint_holds(
                    doc[i], entry.constraint, at_onset
                ):
                    found.append(ConnectiveMatch(entry, doc[i], at_onset))
                    i += n
                    break
            else:
                i += 1
        return found
