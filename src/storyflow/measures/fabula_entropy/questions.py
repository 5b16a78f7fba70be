"""Template questions (the paper's appendix A.2 and A.3) and comprehension controls.

A story *version* is a list of lines (sentences, numbered from 1 in the prompts). Questions are
defined on positions, not on strings, so a story and its corrupted copy get the same questions:

- EWC (world coherence): a *slot* is a descriptive word of the original, an adjective or adverb
  (spaCy POS ADJ/ADV) attached as ``amod``/``advmod``/``acomp`` to a noun, proper noun or verb
  (an entity or an event it takes part in). A question fills a template with the word found at
  the slot in the version being asked about (the antonym in a swapped copy) and its line N;
- ETC (transitional coherence): a pair of adjacent lines (N, N+1), or a line and its
  predecessor, fills a template; the question names line numbers only, so it reads the same in
  every version.

Which slots, pairs and templates a story gets is drawn with ``seeds.item_rng(seed, story_id)``:
the same seed gives the same questions. Controls have known answers (a word that occurs in the
story or one that does not; whether one quoted line comes before another) and give each reader
a comprehension AUC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: EWC templates (appendix A.2), ``{word}`` and ``{line}`` filled per version.
EWC_TEMPLATES: dict[str, str] = {
    "contradicts": 'Does the word "{word}" contradict an assertion in line {line}?',
    "removable": (
        'Could the word "{word}" in line {line} be removed and the story world would remain '
        "unchanged?"
    ),
    "plausible": 'In the context of this story, is the word "{word}" in line {line} plausible?',
    "consistent": 'Is the word "{word}" in line {line} consistent with the rest of the story?',
}

#: ETC templates (appendix A.3), ``{a}`` = line N, ``{b}`` = line N+1.
ETC_TEMPLATES: dict[str, str] = {
    "contradicts": "Do the events in line {b} contradict the events in line {a}?",
    "reorder": "Could line {b} occur before line {a}?",
    "depends": "Does line {b} have causal dependencies established in line {a}?",
    "follows": "Does line {b} follow naturally from line {a}?",
}

MODIFIER_DEPS = frozenset({"amod", "advmod", "acomp"})
HEAD_POS = frozenset({"NOUN", "PROPN", "VERB", "AUX"})

#: Words an absent-word control may ask about (chosen when the story does not contain them).
ABSENT_WORDS = (
    "elephant",
    "violin",
    "volcano",
    "submarine",
    "pineapple",
    "telescope",
    "glacier",
    "saxophone",
    "lighthouse",
    "kangaroo",
    "cathedral",
    "tornado",
    "parachute",
    "cactus",
)


@dataclass(frozen=True)
class Slot:
    """A descriptive word of the original: its line (0-based), token index in the line, text."""

    line: int
    token: int
    word: str
    pos: str


def descriptive_slots(doc_lines: list[Any]) -> list[Slot]:
    """Adjectives/adverbs modifying an entity or event, from spaCy docs (one per line)."""
    slots = []
    for n, doc in enumerate(doc_lines):
        for tok in doc:
            if (
                tok.pos_ in ("ADJ", "ADV")
                and tok.dep_ in MODIFIER_DEPS
                and tok.head.pos_ in HEAD_POS
                and tok.is_alpha
                and len(tok.text) > 2
            ):
                slots.append(Slot(n, tok.i, tok.text, tok.pos_))
    return slots


def ewc_questions(
    slots: list[Slot], n_questions: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """Up to ``n_questions`` EWC questions: (slot, template) pairs drawn without replacement,
    slots spread first (every slot once before any twice)."""
    if not slots:
        return []
    names = list(EWC_TEMPLATES)
    order = rng.permutation(len(slots))
    pairs = []
    for round_ in range(len(names)):
        for i in order:
            pairs.append((slots[int(i)], names[(int(i) + round_) % len(names)]))
    chosen = pairs[:n_questions]
    return [{"template": t, "line": s.line, "token": s.token, "word": s.word} for s, t in chosen]


def ewc_text(template: str, word: str, line: int) -> str:
    """The filled EWC question (``line`` 0-based; prompts number lines from 1)."""
    return EWC_TEMPLATES[template].format(word=word, line=line + 1)


def etc_questions(n_lines: int, n_questions: int, rng: np.random.Generator) -> list[dict]:
    """Up to ``n_questions`` ETC questions over adjacent line pairs (N, N+1), all pairs × all
    templates in seeded order, pairs spread first."""
    if n_lines < 2:
        return []
    names = list(ETC_TEMPLATES)
    pairs = list(range(n_lines - 1))
    order = [pairs[int(i)] for i in rng.permutation(len(pairs))]
    chosen = []
    for round_ in range(len(names)):
        for a in order:
            chosen.append((a, names[(a + round_) % len(names)]))
    return [{"template": t, "line": a, "token": -1, "word": ""} for a, t in chosen[:n_questions]]


def etc_text(template: str, line: int) -> str:
    """The filled ETC question about lines ``line`` + 1 and ``line`` + 2 (1-based in text)."""
    return ETC_TEMPLATES[template].format(a=line + 1, b=line + 2)


def control_questions(
    lines: list[str], words: list[str], n_each: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """Comprehension controls with known answers (``truth`` 1 = yes):

    - ``word_present``: 'Does the word "w" occur in the story?' for a content word of the story;
    - ``word_absent``: the same for a word of :data:`ABSENT_WORDS` the story lacks;
    - ``order``: 'Does the line "A" come before the line "B" in the story?' for two distinct
      lines, in the story's order or reversed (a coin flip per question).
    ``n_each`` of each kind (fewer when the story has too few words or lines).
    """
    text = " ".join(lines).lower()
    out: list[dict[str, Any]] = []
    present = sorted({w for w in words if len(w) > 3})
    for w in [present[int(i)] for i in rng.permutation(len(present))[:n_each]]:
        out.append(
            {
                "template": "word_present",
                "text": f'Does the word "{w}" occur in the story?',
                "truth": 1,
            }
        )
    absent = [w for w in ABSENT_WORDS if w not in text]
    for w in [absent[int(i)] for i in rng.permutation(len(absent))[:n_each]]:
        out.append(
            {
                "template": "word_absent",
                "text": f'Does the word "{w}" occur in the story?',
                "truth": 0,
            }
        )
    if len(lines) >= 2:
        for _ in range(n_each):
            a, b = sorted(int(x) for x in rng.choice(len(lines), size=2, replace=False))
            first, second = (a, b) if rng.random() < 0.5 else (b, a)
            out.append(
                {
                    "template": "order",
                    "text": f'Does the line "{lines[first]}" come before the line '
                    f'"{lines[second]}" in the story?',
                    "truth": int(first < second),
                }
            )
    return out
