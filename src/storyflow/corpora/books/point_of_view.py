"""Point of view of a passage: first- and third-person pronoun rates per 100 words of narration
(outside dialogue)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from storyflow.corpora.books.patterns import FIRST_PERSON, POV_LABELS, THIRD_PERSON, WORD

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
    words = [w.lower().replace("’", "'") for w in WORD.findall(text)]
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
