"""Template questions (the paper's appendix A.2 and A.3) and comprehension controls.

A *passage* is what a reader is shown: a list of numbered lines (from 1 in the prompts). For ETC
a line is a plot point (a group of consecutive sentences, :func:`plot_points`), for EWC a
sentence of a segment of the story (:func:`segments`). Questions are defined on positions, not
on strings, so a passage and its corrupted copy get the same questions:

- EWC (world coherence): a *slot* is a descriptive word of the original, an adjective or adverb
  (spaCy POS ADJ/ADV) attached as ``amod``/``advmod``/``acomp`` to a noun, proper noun or verb
  (an entity or an event it takes part in). A question fills a template with the word found at
  the slot in the version being asked about (the antonym in a swapped copy); "Does [word]
  contradict an assertion on Line N?" names *another* line N of the passage, the other
  templates name the word's own line;
- ETC (transitional coherence): a plot point N and its predecessor N−1 fill a template
  ("Could Line N−1 occur before Line N?"); the question names line numbers only, so it reads
  the same in every version.

Every template has a *provenance*: ``paper`` (worded as in the paper's appendix) or
``storyflow`` (the project's own; kept out of ``fabula_entropy.templates: paper``). Which slots,
pairs and templates a story gets is drawn with ``seeds.item_rng(seed, story_id)``: the same
seed gives the same questions. Controls (storyflow's own) have known answers (a word that
occurs in the passage or one that does not; whether one quoted line comes before another) and
give each reader its validity check.

For the content-free calibration (:mod:`.readers`) each question also has *prior texts*: the
question with its content (the word, the quoted lines) replaced by fillers, asked about a
content-free passage; line numbers stay, as they are not story content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

PAPER = "paper"
STORYFLOW = "storyflow"
PROVENANCES = (PAPER, STORYFLOW)


@dataclass(frozen=True)
class Template:
    """A question template and where its wording comes from (``paper`` or ``storyflow``)."""

    text: str
    provenance: str


#: EWC templates (appendix A.2): ``{word}``, the word's own line ``{word_line}`` and, for
#: ``contradicts``, another line ``{line}`` of the passage (1-based when filled).
EWC_TEMPLATES: dict[str, Template] = {
    "contradicts": Template(
        'Does the word "{word}" contradict an assertion on Line {line}?', PAPER
    ),
    "removable": Template(
        'Could the word "{word}" in Line {word_line} be removed and the story world would '
        "remain unchanged?",
        PAPER,
    ),
    "plausible": Template(
        'In the context of this story, is the word "{word}" in Line {word_line} plausible?',
        STORYFLOW,
    ),
    "consistent": Template(
        'Is the word "{word}" in Line {word_line} consistent with the rest of the story?',
        STORYFLOW,
    ),
}

#: ETC templates (appendix A.3): ``{a}`` = Line N−1, ``{b}`` = Line N (1-based when filled).
ETC_TEMPLATES: dict[str, Template] = {
    "contradicts": Template("Do the events in Line {b} contradict the events in Line {a}?", PAPER),
    "reorder": Template("Could Line {a} occur before Line {b}?", PAPER),
    "depends": Template("Does Line {b} have causal dependencies established in Line {a}?", PAPER),
    "follows": Template("Does Line {b} follow naturally from Line {a}?", STORYFLOW),
}

#: Control templates (storyflow's own; known answers).
CONTROL_TEMPLATES: dict[str, Template] = {
    "word_present": Template('Does the word "{word}" occur in the story?', STORYFLOW),
    "word_absent": Template('Does the word "{word}" occur in the story?', STORYFLOW),
    "order": Template(
        'Does the line "{first}" come before the line "{second}" in the story?', STORYFLOW
    ),
}

TEMPLATES = {"ewc": EWC_TEMPLATES, "etc": ETC_TEMPLATES, "control": CONTROL_TEMPLATES}

#: A line of the content-free passage, and the filler of a question's content slots (Zhao et
#: al. 2021's content-free input "N/A").
CONTENT_FREE = "N/A"
#: A second word filler, absent from the content-free passage: a word control's prior is the
#: mean over a word the passage holds ("N/A") and one it lacks, so that a reader who reads
#: correctly has a prior near 0.5 there rather than the answer of one of the two.
ABSENT_FILLER = "X"


def provenance(kind: str, template: str) -> str:
    """``paper`` or ``storyflow`` for a template of ``kind`` (ewc, etc, control)."""
    return TEMPLATES[kind][template].provenance


def template_names(kind: str, templates: str) -> list[str]:
    """The templates of ``kind`` a run asks: all, or (``templates`` = paper) the paper's."""
    return [
        name for name, t in TEMPLATES[kind].items() if templates == "all" or t.provenance == PAPER
    ]


def plot_points(sentences: Sequence[str], n_points: int) -> list[str]:
    """The sentences in ``n_points`` groups of consecutive sentences (each group joined by a
    space), the sizes differing by at most one, the larger groups first (``numpy.array_split``:
    17 sentences in 5 points are 4, 4, 3, 3, 3); one point per sentence when the story has
    fewer sentences than points."""
    if not sentences:
        return []
    parts = np.array_split(np.arange(len(sentences)), min(n_points, len(sentences)))
    return [" ".join(sentences[i] for i in part) for part in parts if len(part)]


def segments(n_sentences: int, size: int) -> list[range]:
    """Consecutive segments of ``size`` sentences over the whole story (the last may be
    shorter): the EWC passages."""
    return [range(s, min(s + size, n_sentences)) for s in range(0, n_sentences, size)]


def spread(total: int, parts: int) -> list[int]:
    """``total`` questions of a story spread over its ``parts`` segments: as even as possible,
    the first segments taking one more, and at least one each (so a story of more segments than
    questions gets one per segment)."""
    base, extra = divmod(total, parts) if parts else (0, 0)
    return [max(1, base + (i < extra)) for i in range(parts)]


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
    slots: list[Slot],
    n_lines: int,
    n_questions: int,
    rng: np.random.Generator,
    names: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Up to ``n_questions`` EWC questions about a passage of ``n_lines`` lines: (slot,
    template) pairs drawn without replacement, slots spread first (every slot once before any
    twice), each slot's templates in a random order, among the templates ``names`` (default
    all). ``contradicts`` names another line of
    the passage, drawn uniformly (not asked when the passage has one line).

    Returns dicts with ``template``, ``line`` (0-based: the line the question names: for
    ``contradicts`` the other line, else the word's line), ``word_line``, ``token``, ``word``.
    """
    names = list(names if names is not None else EWC_TEMPLATES)
    if n_lines < 2:
        names = [n for n in names if n != "contradicts"]
    if not slots or not names:
        return []
    order = rng.permutation(len(slots))
    templates = {int(i): [names[int(t)] for t in rng.permutation(len(names))] for i in order}
    pairs = []
    for round_ in range(len(names)):
        for i in order:
            pairs.append((slots[int(i)], templates[int(i)][round_]))
    out = []
    for slot, template in pairs[:n_questions]:
        line = slot.line
        if template == "contradicts":
            others = [n for n in range(n_lines) if n != slot.line]
            line = others[int(rng.integers(len(others)))]
        out.append(
            {
                "template": template,
                "line": line,
                "word_line": slot.line,
                "token": slot.token,
                "word": slot.word,
            }
        )
    return out


def ewc_text(template: str, word: str, line: int, word_line: int) -> str:
    """The filled EWC question (``line``, ``word_line`` 0-based; prompts number lines from 1)."""
    return EWC_TEMPLATES[template].text.format(word=word, line=line + 1, word_line=word_line + 1)


def etc_questions(
    n_lines: int,
    n_questions: int,
    rng: np.random.Generator,
    names: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Up to ``n_questions`` ETC questions over the pairs (Line N−1, Line N) of a passage of
    ``n_lines`` lines, all pairs × the templates ``names`` (default all) in seeded order, pairs
    spread first, each pair's templates in a random order (so a pair does not always get the
    same template in every story). ``line`` is N, 0-based (1 to n_lines − 1)."""
    names = list(names if names is not None else ETC_TEMPLATES)
    if n_lines < 2 or not names:
        return []
    later = list(range(1, n_lines))
    order = [later[int(i)] for i in rng.permutation(len(later))]
    templates = {n: [names[int(t)] for t in rng.permutation(len(names))] for n in order}
    chosen = []
    for round_ in range(len(names)):
        for n in order:
            chosen.append((n, templates[n][round_]))
    return [
        {"template": t, "line": n, "word_line": -1, "token": -1, "word": ""}
        for n, t in chosen[:n_questions]
    ]


def etc_text(template: str, line: int) -> str:
    """The filled ETC question about Line N−1 and Line N, ``line`` = N 0-based (so Line
    ``line`` and Line ``line`` + 1 in the 1-based text)."""
    if line < 1:
        raise ValueError(f"an ETC question names a line and its predecessor: line {line}")
    return ETC_TEMPLATES[template].text.format(a=line, b=line + 1)


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
    word = CONTROL_TEMPLATES["word_present"].text
    for w in [present[int(i)] for i in rng.permutation(len(present))[:n_each]]:
        out.append({"template": "word_present", "text": word.format(word=w), "truth": 1})
    absent = [w for w in ABSENT_WORDS if w not in text]
    for w in [absent[int(i)] for i in rng.permutation(len(absent))[:n_each]]:
        out.append({"template": "word_absent", "text": word.format(word=w), "truth": 0})
    if len(lines) >= 2:
        order = CONTROL_TEMPLATES["order"].text
        for _ in range(n_each):
            a, b = sorted(int(x) for x in rng.choice(len(lines), size=2, replace=False))
            first, second = (a, b) if rng.random() < 0.5 else (b, a)
            out.append(
                {
                    "template": "order",
                    "text": order.format(first=lines[first], second=lines[second]),
                    "truth": int(first < second),
                }
            )
    return out


def prior_texts(kind: str, template: str, line: int, word_line: int) -> list[str]:
    """The question with its content replaced by fillers, for the template-level content-free
    prior (:mod:`.readers`): EWC with the word :data:`CONTENT_FREE` (line numbers kept), ETC
    unchanged (it holds line numbers only), an order control with both quoted lines
    :data:`CONTENT_FREE`, a word control twice, with a word the content-free passage holds and
    one it lacks (the prior is their mean)."""
    if kind == "ewc":
        return [ewc_text(template, CONTENT_FREE, line, word_line)]
    if kind == "etc":
        return [etc_text(template, line)]
    if template == "order":
        text = CONTROL_TEMPLATES["order"].text
        return [text.format(first=CONTENT_FREE, second=CONTENT_FREE)]
    text = CONTROL_TEMPLATES[template].text
    return [text.format(word=CONTENT_FREE), text.format(word=ABSENT_FILLER)]
