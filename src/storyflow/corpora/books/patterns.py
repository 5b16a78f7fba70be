"""The word lists and patterns the book readers use: manifest columns, pronouns, headings,
tables of contents, sentence ends and bracketed notes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


#: Standard columns of the manifest table returned by :func:`read_manifest`.
MANIFEST_COLUMNS = ("document_id", "genre", "path")

FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
THIRD_PERSON = frozenset(
    {"he", "him", "his", "himself", "she", "her", "hers", "herself"}
    | {"they", "them", "their", "theirs", "themselves"}
)
WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")
HEADING = re.compile(
    r"^(chapter|book|part|volume|section|canto|letter|appendix|preface|contents|index|"
    r"introduction|epilogue|prologue)\b|^[ivxlcdm]+[.:]?$|^\d+[.:]?$",
    re.IGNORECASE,
)
TOC_LINE = re.compile(r"(\.\s*){3,}|\s\d{1,4}\s*$")
SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$|[.!?][\"'”’)\]]*\s*--$")
BRACKETED = re.compile(r"^\s*[\[{(<]|\[(illustration|footnote|transcriber|note)", re.IGNORECASE)
#: The points of view a passage can have (:func:`.point_of_view.point_of_view`).
POV_LABELS = ("1P", "3P", "unclear")
