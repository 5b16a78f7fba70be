"""Quoted lines matched to a story's sentences (the paper's answer format, FlawedFictions).

The paper's detectors do not number lines: they quote the lines that carry the error and the
lines it contradicts (``<error_lines>``, ``<contradicted_lines>``; `flawed_fictions.txt`
l. 1580-1611), and CEEval-Full asks whether each predicted set holds at least one sentence of
the ground truth (l. 94). A quote is therefore turned into the story's 1-based sentence numbers:

* the block of a tag is cut into quotes, one per line (list marks, numbering and outer quotes
  removed; ``NA`` and bracketed placeholders dropped); a line that matches no sentence as a
  whole is tried as its quoted pieces (``"A." and "B."``), then as its ``;``-separated parts
  (the paper's human annotators separate sentences with semicolons, l. 455-457);
* a quote matches a sentence when, compared in lower case with whitespace, quote marks and
  outer punctuation normalised, the two are equal, the quote lies inside the sentence (a
  partial quote of at least :data:`MIN_PARTIAL_WORDS` words), the sentence lies inside the quote
  (a quote spanning several sentences; sentences of at least :data:`MIN_INSIDE_WORDS` words), or
  their similarity (difflib ratio) is at least :data:`MIN_RATIO` (a quote with a slip).

A quote that matches no sentence is kept out of the sets and counted (:class:`Matched`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

#: Words a partial quote needs before it may match the sentence it lies in ("he said" would
#: match half the story).
MIN_PARTIAL_WORDS = 4
#: Words a sentence needs before a longer quote that contains it matches it.
MIN_INSIDE_WORDS = 3
#: difflib similarity at which a quote matches a sentence it does not equal or contain.
MIN_RATIO = 0.9

_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "`": "'"})
_PLACEHOLDER = re.compile(r"^(?:n/?a|none|not applicable|-+|\[.*\])$", re.I)


def normalise(text: str) -> str:
    """``text`` in lower case with curly quotes made straight, whitespace collapsed, and outer
    quotes, list marks and punctuation removed."""
    text = re.sub(r"\s+", " ", (text or "").translate(_QUOTES)).strip().lower()
    text = re.sub(r"^(?:[-*•>]+|\d+[.)])\s+", "", text)
    return text.strip(" \"'.,;:!?()[]*").strip()


def quotes_of(block: str | None) -> list[str]:
    """The quotes of one tag's block: one per non-empty line, placeholders (``NA``,
    ``[If applicable, ...]``) dropped."""
    out = []
    for line in (block or "").splitlines():
        line = re.sub(r"^\s*(?:[-*•>]+|\d+[.)])\s+", "", line).strip()
        forms = (line.rstrip("."), normalise(line))
        if forms[1] and not any(_PLACEHOLDER.match(f) for f in forms):
            out.append(line)
    return out


def _matches(quote: str, sentence: str) -> bool:
    if not quote or not sentence:
        return False
    if quote == sentence:
        return True
    if quote in sentence and len(quote.split()) >= MIN_PARTIAL_WORDS:
        return True
    if sentence in quote and len(sentence.split()) >= MIN_INSIDE_WORDS:
        return True
    return SequenceMatcher(a=quote, b=sentence, autojunk=False).ratio() >= MIN_RATIO


def _lines_of(quote: str, sentences: Sequence[str]) -> set[int]:
    q = normalise(quote)
    return {i + 1 for i, s in enumerate(sentences) if _matches(q, s)}


@dataclass(frozen=True)
class Matched:
    """The 1-based sentence numbers the quotes matched, the quotes given, and those that
    matched no sentence."""

    lines: tuple[int, ...]
    n_quotes: int
    unmatched: tuple[str, ...]


def match_quotes(block: str | None, sentences: Sequence[str]) -> Matched:
    """The sentences (1-based) the quotes of ``block`` name (module docstring)."""
    norm = [normalise(s) for s in sentences]
    found: set[int] = set()
    unmatched = []
    quotes = quotes_of(block)
    for quote in quotes:
        hits = _lines_of(quote, norm)
        if not hits:
            pieces = re.findall(r"\"([^\"]{3,})\"", quote.translate(_QUOTES))
            if len(pieces) < 2:
                pieces = [p for p in quote.split(";") if p.strip()]
            if len(pieces) > 1:
                hits = set().union(*(_lines_of(p, norm) for p in pieces))
        if hits:
            found |= hits
        else:
            unmatched.append(quote)
    return Matched(tuple(sorted(found)), len(quotes), tuple(unmatched))
