"""Template questions (the paper's appendix A.2 and A.3) and comprehension controls.

A *passage* is what a reader is shown: a list of numbered lines (from 1 in the prompts). For ETC
a line is a plot point (a group of consecutive sentences, :func:`plot_points`), for EWC a
sentence of a segment of the story (:func:`segments`). Questions are defined on positions, not
on strings, so a passage and its corrupted copies get the same questions.

**The templates.** Every template of the paper's appendix is in the library, in storyflow's
own wording (the project does not reproduce the paper's text; each template cites its line of
``fabula_entropy_indexing.txt``, where the printed question is): the 10 EWC templates of A.2
(l. 322-342) and the 11 ETC templates of A.3 (l. 346-368). Each asks what the cited template
asks, with the same polarity (a yes means what it means there), so that the readers are asked
what the paper's readers were asked; how the rewording moves the answers is not measured. The
paper's templates hold placeholders (``[Adverb/Adjective]``, ``Object/Entity/Event``,
``Entity A``, ``Object A``, ``State S``, ``Line N``, ...) that its question writers filled by
hand, choosing entities, properties and lines freely (l. 205); storyflow's wordings hold, in
their place, the slot fields of :func:`slot_values`, filled from the story's parse in the
style of the paper's filled examples of A.4 (l. 372-382: the word quoted, its line named):

- EWC (world coherence): a *slot* is a descriptive word of the original, an adjective or adverb
  (spaCy POS ADJ/ADV) attached as ``amod``/``advmod``/``acomp`` to a noun, proper noun or verb
  (an entity or an event it takes part in). ``[Adverb/Adjective]`` is the word found at the slot
  in the version being asked about (the antonym in a swapped copy), quoted, with its line where
  the template names no line of its own; ``Object/Entity/Event`` is the word it describes (the
  noun, the verb, or for a predicate adjective the verb's subject), quoted; "this line" and the
  ``Line N`` of a template about the word's own line are the word's line; the ``contradicts``
  template (l. 338: the word against a line) names *another* line, drawn uniformly; the
  ``necessary`` template (l. 342: the next line depends on the word) names the word's line and
  the next;
- ETC (transitional coherence): a pair of consecutive plot points, N−1 and N (the templates
  that say N and N+1 mean the same pair); ``Entity A``/``Entity B`` are characters of the pair
  (grammatical subjects and personal pronouns; A from the earlier line, B another one),
  ``Object A`` a noun of the line the template names, ``State S`` an adjective describing that
  noun; the question names line numbers and the original's words, so it reads the same in every
  version.

Two templates are storyflow's own (provenance ``storyflow``, kept out of
``fabula_entropy.templates: paper``): EWC ``consistent`` and ETC ``follows``. Which slots, pairs
and templates a story gets is drawn with ``seeds.item_rng(seed, story_id)``: the same seed gives
the same questions. Controls (storyflow's own) have known answers (a word that occurs in the
passage or one that does not; whether one quoted line comes before another) and give each
reader its validity check.

For the content-free calibration (:mod:`.readers`) each question also has *prior texts*: the
question with its content (words, entities, objects, quoted lines) replaced by fillers, asked
about a content-free passage; line numbers stay, as they are not story content.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

PAPER = "paper"
STORYFLOW = "storyflow"
PAPER_FILE = "fabula_entropy_indexing.txt"


@dataclass(frozen=True)
class Template:
    """A question template.

    ``wording``: the template as written (for a ``paper`` template: storyflow's wording of the
    question printed at ``source``, with the slot fields of :func:`slot_values`, ``{word_at}``,
    ``{first}``, ..., where the paper has placeholders); ``provenance``: ``paper`` or
    ``storyflow``; ``source``: the paper's line (``<file> l. N``) or ``storyflow``; ``subs``:
    (placeholder, replacement) pairs applied in order, each replacement a format string over
    the slot values (a wording written with placeholders of its own; empty for the paper's).
    """

    wording: str
    provenance: str
    source: str
    subs: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        """The fillable form: every placeholder replaced by its slot fields."""
        out = self.wording
        for placeholder, replacement in self.subs:
            if placeholder not in out:
                raise ValueError(f"{placeholder!r} is not in the template {self.wording!r}")
            out = out.replace(placeholder, replacement)
        return out

    @property
    def slots(self) -> frozenset[str]:
        """The slot values the template needs."""
        return frozenset(f for _, f, _, _ in string.Formatter().parse(self.text) if f)

    def fill(self, values: Mapping[str, str]) -> str:
        """The question, the slots filled from ``values`` (:func:`slot_values`)."""
        return self.text.format(**values)


WORD = "[Adverb/Adjective]"
_PAPER = f"{PAPER_FILE} l. "


def _paper(line: str, wording: str, *subs: tuple[str, str]) -> Template:
    return Template(wording, PAPER, _PAPER + line, subs)


# The paper's EWC question templates, appendix A.2 (fabula_entropy_indexing.txt l. 320-342),
# reworded in storyflow's words (the project does not reproduce the paper's text): each asks
# what the template on the cited line asks, with the same polarity (yes means what it means
# there), and is written with the slot fields that fill the paper's placeholders. The first is
# followed in the paper by an example and a note for the question writers (l. 322-324), which
# are not part of the question.
EWC_TEMPLATES: dict[str, Template] = {
    "plausible": _paper("322", "Given the world this story sets up, is {word_at} believable?"),
    "imagined": _paper(
        "326", "Until {word_line}, had you considered that {head} might be described as {word}?"
    ),
    "belief": _paper(
        "328",
        "Having read {word_line}, where {word} appears, do you accept {word} as a fitting "
        "description rather than rejecting it?",
    ),
    "line_contradicts": _paper(
        "330", "Does the word {word} make {word_line} conflict with something another line says?"
    ),
    "valence": _paper(
        "332", "Does {word_at} show strong feeling, whether positive or negative, toward {head}?"
    ),
    "alters_sentiment": _paper(
        "334",
        "In the line where {word} appears, does it change how the author or a character feels "
        "about {head}?",
    ),
    "changes_your_sentiment": _paper(
        "336", "Does {word_at} change how you yourself feel about {head}?"
    ),
    "contradicts": _paper("338", "Is {word_at} at odds with anything stated on {other_line}?"),
    "removable": _paper(
        "340", "If {word_at} were deleted, would the world of the story stay the same?"
    ),
    "necessary": _paper(
        "342",
        "Had {word} been missing from {word_line}, the events of {next_line} could not have "
        "taken place.",
    ),
    # storyflow's own (not in the paper)
    "consistent": Template(
        "Is [Adverb/Adjective] consistent with the rest of the story?",
        STORYFLOW,
        STORYFLOW,
        ((WORD, "{word_at}"),),
    ),
}

# The paper's ETC question templates, appendix A.3 (fabula_entropy_indexing.txt l. 344-368),
# reworded in storyflow's words as the EWC ones above. The possession template is cut at the
# page's end in the text (l. 356); the whole of it is quoted in §4.3 (l. 158). Pair of lines:
# {first} = Line N-1 (or N where the template says N, N+1), {second} = the next line.
ETC_TEMPLATES: dict[str, Template] = {
    "perception": _paper("346", "Does {entity_a_s} view of {entity_b} shift?"),
    "awareness": _paper(
        "348", "Does every character in {first} see or come to know about what happens in {second}?"
    ),
    "contradicts": _paper(
        "350", "Is what happens in {second} incompatible with what happens in {first}?"
    ),
    "sentiment": _paper("352", "Do {entity_a_s} feelings change from {first} to {second}?"),
    "retains": _paper("354", "Does {state_object_at} remain in {state}?"),
    "possession": _paper(
        "356, l. 158", "Does {object_second} pass to a different owner in {second}?"
    ),
    "object_necessary": _paper(
        "360", "Do the events of {first} need {object_second} from {second} in order to happen?"
    ),
    "location": _paper("362", "Does the place or the situation change from {first} to {second}?"),
    "knowledge": _paper(
        "364", "Do you need to know about {object_first_at} to make sense of the next line?"
    ),
    "depends": _paper("366", "Does what happens in {second} rest on causes set up in {first}?"),
    "reorder": _paper("368", "Is it possible for {first} to take place before {second}?"),
    # storyflow's own (not in the paper)
    "follows": Template(
        "Does Line N follow naturally from Line N-1?",
        STORYFLOW,
        STORYFLOW,
        (("Line N-1", "{first}"), ("Line N", "{second}")),
    ),
}

#: Control templates (storyflow's own; known answers).
CONTROL_TEMPLATES: dict[str, Template] = {
    "word_present": Template(
        'Does the word "{word}" occur in the story?', STORYFLOW, STORYFLOW, ()
    ),
    "word_absent": Template('Does the word "{word}" occur in the story?', STORYFLOW, STORYFLOW, ()),
    "order": Template(
        'Does the line "{first}" come before the line "{second}" in the story?',
        STORYFLOW,
        STORYFLOW,
        (),
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

#: The content of a question (words of the story) as the question dicts hold it: the EWC word
#: and what it describes; the ETC pair's characters (A's possessive form, B's object form), a
#: noun of each line and a described noun of the earlier line with its adjective.
CONTENT_KEYS = (
    "word", "head", "entity_a_s", "entity_b", "object_first", "object_second", "state_object",
    "state",
)  # fmt: skip


def provenance(kind: str, template: str) -> str:
    """``paper`` or ``storyflow`` for a template of ``kind`` (ewc, etc, control)."""
    return TEMPLATES[kind][template].provenance


def template_names(kind: str, templates: str) -> list[str]:
    """The templates of ``kind`` a run asks: all, or (``templates`` = paper) the paper's."""
    return [
        name for name, t in TEMPLATES[kind].items() if templates == "all" or t.provenance == PAPER
    ]


def _quoted(word: str) -> str:
    return f'"{word}"'


def slot_values(q: Mapping[str, Any], filler: str | None = None) -> dict[str, str]:
    """The phrases that fill a template's fields, from a question dict (``line``, ``word_line``
    0-based, and the :data:`CONTENT_KEYS` it has). EWC: ``line`` is the line the question names
    (another line for ``contradicts``); ETC: ``line`` is the pair's second line N (the first is
    N−1). Lines are named 1-based ("Line 3"). With ``filler``, every content word is replaced
    by it (the calibration's prior texts); line numbers stay."""

    def raw(key: str) -> str:
        value = str(q.get(key) or "")
        return filler if filler is not None and value else value

    n, w = int(q.get("line", -1)), int(q.get("word_line", -1))
    possessive = q.get("entity_a_s") or ""
    if filler is not None and possessive:
        possessive = f"{filler}'s"
    return {
        "word": _quoted(raw("word")),
        "word_at": f"{_quoted(raw('word'))} in Line {w + 1}",
        "word_line": f"Line {w + 1}",
        "other_line": f"Line {n + 1}",
        "next_line": f"Line {w + 2}",
        "head": _quoted(raw("head")),
        "first": f"Line {n}",
        "second": f"Line {n + 1}",
        "entity_a_s": possessive,
        "entity_b": raw("entity_b"),
        "object_second": _quoted(raw("object_second")),
        "object_first_at": f"{_quoted(raw('object_first'))} in Line {n}",
        "state_object_at": f"{_quoted(raw('state_object'))} in Line {n}",
        "state": f"the state {_quoted(raw('state'))}",
    }


def question_text(kind: str, q: Mapping[str, Any]) -> str:
    """The filled EWC or ETC question of the question dict ``q`` (its ``template``)."""
    if kind == "etc" and int(q["line"]) < 1:
        raise ValueError(f"an ETC question names a line and its predecessor: line {q['line']}")
    return TEMPLATES[kind][q["template"]].fill(slot_values(q))


def plot_point_groups(n_sentences: int, n_points: int) -> list[np.ndarray]:
    """The sentence indices of each plot point: ``n_points`` groups of consecutive sentences,
    the sizes differing by at most one, the larger groups first (``numpy.array_split``: 17
    sentences in 5 points are 4, 4, 3, 3, 3); one point per sentence when the story has fewer
    sentences than points."""
    if not n_sentences:
        return []
    parts = np.array_split(np.arange(n_sentences), min(n_points, n_sentences))
    return [part for part in parts if len(part)]


def plot_points(sentences: Sequence[str], n_points: int) -> list[str]:
    """The sentences in ``n_points`` groups of consecutive sentences (:func:`plot_point_groups`),
    each group joined by a space."""
    return [
        " ".join(sentences[i] for i in part) for part in plot_point_groups(len(sentences), n_points)
    ]


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
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})

#: Personal pronouns as an ETC entity: (possessive, object form, person). "it" is no character.
PRONOUNS = {
    "i": ("my", "me", "1s"), "me": ("my", "me", "1s"),
    "we": ("our", "us", "1p"), "us": ("our", "us", "1p"),
    "you": ("your", "you", "2"),
    "he": ("his", "him", "3m"), "him": ("his", "him", "3m"),
    "she": ("her", "her", "3f"),
    "they": ("their", "them", "3p"), "them": ("their", "them", "3p"),
}  # fmt: skip

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
    """A descriptive word of the original: its line (0-based), token index in the line, text,
    POS and ``head``, the word it describes (noun, verb, or a predicate adjective's subject)."""

    line: int
    token: int
    word: str
    pos: str
    head: str = ""


def _described(tok: Any) -> str:
    """What a descriptive word describes: its head, or for a predicate adjective (``acomp``, or
    a head that is an auxiliary) the head verb's subject when it has one."""
    head = tok.head
    if tok.dep_ == "acomp" or head.pos_ == "AUX":
        subjects = [c for c in head.children if c.dep_ in SUBJECT_DEPS]
        if subjects:
            return subjects[0].text
    return head.text


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
                slots.append(Slot(n, tok.i, tok.text, tok.pos_, _described(tok)))
    return slots


@dataclass(frozen=True)
class Entity:
    """A character of a plot point: ``key`` (who it is: a pronoun's person or a noun's lemma),
    its ``possessive`` and ``object`` forms ("my", "me"; "the teacher's", "the teacher")."""

    key: str
    possessive: str
    object: str


@dataclass(frozen=True)
class PointContent:
    """What the ETC templates' placeholders can name in one plot point: its characters, its
    nouns, and its nouns described by an adjective (noun, adjective)."""

    entities: tuple[Entity, ...] = ()
    objects: tuple[str, ...] = ()
    states: tuple[tuple[str, str], ...] = field(default=())


def _phrase(tok: Any) -> str:
    """A noun with its determiner, possessive, compounds and adjectives ("my old car"); a
    sentence-initial determiner lowercased."""
    keep = [c for c in tok.lefts if c.dep_ in ("det", "poss", "compound", "amod")]
    words = [c.text for c in keep] + [tok.text]
    if keep and keep[0].pos_ in ("DET", "PRON"):
        words[0] = words[0].lower()
    return " ".join(words)


def _entity(tok: Any) -> Entity | None:
    if tok.pos_ == "PRON":
        forms = PRONOUNS.get(tok.lower_)
        return Entity(forms[2], forms[0], forms[1]) if forms else None
    if tok.pos_ in ("PROPN", "NOUN") and tok.is_alpha:
        phrase = _phrase(tok)
        return Entity(tok.lemma_.lower(), f"{phrase}'s", phrase)
    return None


def point_content(docs: Sequence[Any]) -> PointContent:
    """The characters, nouns and described nouns of one plot point (its sentences' spaCy docs):
    characters are grammatical subjects (personal pronouns, proper and common nouns) and
    personal pronouns anywhere; objects are common nouns of three letters or more that are not
    subjects; a described noun has an adjective (not a stop word) as ``amod`` or, as subject,
    through a predicate adjective."""
    entities: dict[str, Entity] = {}
    objects: dict[str, None] = {}
    states: dict[tuple[str, str], None] = {}
    for doc in docs:
        for tok in doc:
            if tok.dep_ in SUBJECT_DEPS or (tok.pos_ == "PRON" and tok.lower_ in PRONOUNS):
                found = _entity(tok)
                if found is not None and found.key not in entities:
                    entities[found.key] = found
            if tok.pos_ == "NOUN" and tok.is_alpha and len(tok.text) > 2:
                if tok.dep_ not in SUBJECT_DEPS:
                    objects.setdefault(tok.text, None)
                adjectives = [c for c in tok.children if c.dep_ == "amod" and c.pos_ == "ADJ"]
                if tok.dep_ in SUBJECT_DEPS:
                    adjectives += [
                        c for c in tok.head.children if c.dep_ == "acomp" and c.pos_ == "ADJ"
                    ]
                for adj in adjectives:  # "most", "other", "only" are no states
                    if adj.is_alpha and not adj.is_stop:
                        states.setdefault((tok.text, adj.text), None)
    return PointContent(tuple(entities.values()), tuple(objects), tuple(states))


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
    all) that apply to it: ``contradicts`` names another line of the passage, drawn uniformly
    (not asked when the passage has one line); ``necessary`` names the word's line and the next
    (not asked about a word on the last line).

    Returns dicts with ``template``, ``line`` (0-based: the line the question names: for
    ``contradicts`` the other line, for ``necessary`` the next line, else the word's line),
    ``word_line``, ``token``, ``word``, ``head``.
    """
    names = list(names if names is not None else EWC_TEMPLATES)

    def applies(name: str, slot: Slot) -> bool:
        if name == "contradicts":
            return n_lines >= 2
        if name == "necessary":
            return slot.line < n_lines - 1
        return True

    if not slots or not names:
        return []
    order = rng.permutation(len(slots))
    templates = {}
    for i in order:
        mine = [names[int(t)] for t in rng.permutation(len(names))]
        templates[int(i)] = [t for t in mine if applies(t, slots[int(i)])]
    pairs = []
    for round_ in range(len(names)):
        for i in order:
            if round_ < len(templates[int(i)]):
                pairs.append((slots[int(i)], templates[int(i)][round_]))
    out = []
    for slot, template in pairs[:n_questions]:
        line = slot.line
        if template == "contradicts":
            others = [n for n in range(n_lines) if n != slot.line]
            line = others[int(rng.integers(len(others)))]
        elif template == "necessary":
            line = slot.line + 1
        out.append(
            {
                "template": template,
                "line": line,
                "word_line": slot.line,
                "token": slot.token,
                "word": slot.word,
                "head": slot.head,
            }
        )
    return out


def ewc_text(template: str, word: str, line: int, word_line: int, head: str = "") -> str:
    """The filled EWC question (``line``, ``word_line`` 0-based; prompts number lines from 1)."""
    q = {"template": template, "word": word, "line": line, "word_line": word_line, "head": head}
    return question_text("ewc", q)


def _pair_content(
    content: Sequence[PointContent] | None, n: int, rng: np.random.Generator
) -> dict[str, str]:
    """The content of the pair (N−1, N) = (``n`` − 1, ``n``) the ETC placeholders can name:
    entity A from the earlier line (else the later), entity B another character of the later
    line (else the earlier), a noun of each line, a described noun of the earlier line; a key
    is absent when the pair has nothing for it."""
    if content is None:
        return {}
    first, second = content[n - 1], content[n]

    def pick(options: Sequence[Any]) -> Any:
        return options[int(rng.integers(len(options)))] if options else None

    out: dict[str, str] = {}
    a = pick(first.entities) or pick(second.entities)
    if a is not None:
        out["entity_a_s"] = a.possessive
        others = [e for e in second.entities if e.key != a.key] or [
            e for e in first.entities if e.key != a.key
        ]
        b = pick(others)
        if b is not None:
            out["entity_b"] = b.object
    if (noun := pick(first.objects)) is not None:
        out["object_first"] = noun
    if (noun := pick(second.objects)) is not None:
        out["object_second"] = noun
    if (state := pick(first.states)) is not None:
        out["state_object"], out["state"] = state
    return out


#: The question-dict keys each ETC slot field needs.
_ETC_NEEDS = {
    "entity_a_s": ("entity_a_s",),
    "entity_b": ("entity_b",),
    "object_second": ("object_second",),
    "object_first_at": ("object_first",),
    "state_object_at": ("state_object",),
    "state": ("state",),
}


def etc_questions(
    n_lines: int,
    n_questions: int,
    rng: np.random.Generator,
    names: Sequence[str] | None = None,
    content: Sequence[PointContent] | None = None,
) -> list[dict[str, Any]]:
    """Up to ``n_questions`` ETC questions over the pairs (Line N−1, Line N) of a passage of
    ``n_lines`` lines: all pairs × the templates ``names`` (default all) that the pair can fill
    (``content``: per line, :func:`point_content`; without it only the templates that name
    lines alone), in seeded order, pairs spread first, each pair's templates in a random order
    (so a pair does not always get the same template in every story); a question whose text
    another already has is skipped. ``line`` is N, 0-based (1 to n_lines − 1)."""
    names = list(names if names is not None else ETC_TEMPLATES)
    if n_lines < 2 or not names:
        return []
    later = list(range(1, n_lines))
    order = [later[int(i)] for i in rng.permutation(len(later))]
    filled = {n: _pair_content(content, n, rng) for n in order}

    def applies(name: str, n: int) -> bool:
        needs = ETC_TEMPLATES[name].slots
        return all(k in filled[n] for f in needs for k in _ETC_NEEDS.get(f, ()))

    templates = {}
    for n in order:
        mine = [names[int(t)] for t in rng.permutation(len(names))]
        templates[n] = [t for t in mine if applies(t, n)]
    out, seen = [], set()
    for round_ in range(len(names)):
        for n in order:
            if round_ >= len(templates[n]):
                continue
            q = {"template": templates[n][round_], "line": n, "word_line": -1, "token": -1,
                 "word": "", **filled[n]}  # fmt: skip
            text = question_text("etc", q)
            if text not in seen:
                seen.add(text)
                out.append(q)
    return out[:n_questions]


def etc_text(template: str, line: int, content: Mapping[str, str] | None = None) -> str:
    """The filled ETC question about Line N−1 and Line N, ``line`` = N 0-based (so Line
    ``line`` and Line ``line`` + 1 in the 1-based text); ``content``: the pair's words
    (:func:`_pair_content`) for the templates that name characters or objects."""
    return question_text("etc", {"template": template, "line": line, **(content or {})})


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


def prior_texts(kind: str, q: Mapping[str, Any]) -> list[str]:
    """The question dict ``q`` with its content replaced by fillers, for the template-level
    content-free prior (:mod:`.readers`): EWC and ETC questions with every content word
    :data:`CONTENT_FREE` (line numbers kept), an order control with both quoted lines
    :data:`CONTENT_FREE`, a word control twice, with a word the content-free passage holds and
    one it lacks (the prior is their mean)."""
    template = q["template"]
    if kind in ("ewc", "etc"):
        return [TEMPLATES[kind][template].fill(slot_values(q, CONTENT_FREE))]
    if template == "order":
        text = CONTROL_TEMPLATES["order"].text
        return [text.format(first=CONTENT_FREE, second=CONTENT_FREE)]
    text = CONTROL_TEMPLATES[template].text
    return [text.format(word=CONTENT_FREE), text.format(word=ABSENT_FILLER)]
