"""The controlled maker: a continuity error with exact ground truth and no model.

For a story split into sentences and three acts (:mod:`.acts`), a **mention** is a word or
phrase of an attribute class (:mod:`.lexicon`): a colour, a number, an age ("12 years old"), a
weekday, a month, a time of day, a season, a kin term, a place (a GPE entity), or an adjective
with a listed antonym. A **candidate** is a value v whose mentions before act 2 all lie in one
sentence e of act 1 (the *establishing* sentence) and which is mentioned again in a later
sentence c of acts 2-3 (the first later mention; the *changed* sentence). The change replaces
that mention in c by a value v′ that contradicts v and occurs nowhere in the story.

Four versions of each story are written (sentence lists):

* **O**, the original;
* **F**, flawed: the mention in c changed to v′ (S_error = {c}, S_contr = {e});
* **C**, consistent: every mention of v in the story changed to v′ (no contradiction);
* **D**, F without sentence e (the changed mention has nothing to contradict).

The candidate and v′ are drawn with :func:`storyflow.seeds.item_rng` (seed, story id), so a
story's edit does not depend on the other stories of the run.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from storyflow import tables
from storyflow.measures.plot_holes import lexicon
from storyflow.measures.plot_holes.acts import act_bounds
from storyflow.measures.plot_holes.versions import version_row
from storyflow.progress import LoggedBar
from storyflow.seeds import item_rng
from storyflow.sentences import count_words

if TYPE_CHECKING:
    from spacy.tokens import Doc

log = logging.getLogger(__name__)

MAKER = "controlled"
VERSIONS = ("O", "F", "C", "D")


@dataclass(frozen=True)
class Mention:
    """One attribute mention: class, value (lower case), sentence (0-based), character span."""

    cls: str
    value: str
    sentence: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Candidate:
    """A value established in sentence ``establishing`` and mentioned again in ``changed``."""

    cls: str
    value: str
    establishing: int
    changed: int
    mentions: tuple[Mention, ...]
    replacements: tuple[str, ...]


@dataclass
class Edit:
    """A made story: the chosen candidate, the new value and the four versions."""

    story_id: str
    candidate: Candidate
    new_value: str
    versions: dict[str, list[str]] = field(default_factory=dict)


def _number_class(doc: Doc, i: int) -> str:
    """``age`` when token i is followed by "year(s) old" (also "12-year-old"), else ``number``."""
    words = [t.lower_ for t in doc[i + 1 : i + 5] if t.text != "-"]
    return "age" if words[:2] in (["years", "old"], ["year", "old"]) else "number"


def find_mentions(doc: Doc, sentence: int) -> list[Mention]:
    """Every attribute mention of one sentence (a spaCy Doc with tags and entities)."""
    found: list[Mention] = []
    places = {(e.start, e.end) for e in doc.ents if e.label_ == "GPE"}
    for start, end in sorted(places):
        span = doc[start:end]
        found.append(
            Mention("place", span.text.lower(), sentence, span.start_char, span.end_char, span.text)
        )
    in_place = {i for start, end in places for i in range(start, end)}
    for token in doc:
        if token.i in in_place:
            continue
        word = token.lower_
        cls = None
        if token.like_num and ((word.isdigit() and len(word) <= 3) or word in lexicon.NUMBER_WORDS):
            cls = _number_class(doc, token.i)
        elif token.pos_ == "ADJ" and word in lexicon.CLASSES["adjective"]:
            cls = "adjective"
        elif token.pos_ in ("NOUN", "PROPN", "ADJ"):
            for name in ("colour", "weekday", "month", "time_of_day", "season", "kinship"):
                if word in lexicon.CLASSES[name]:
                    cls = name
                    break
        if cls is not None:
            end = token.idx + len(token.text)
            found.append(Mention(cls, word, sentence, token.idx, end, token.text))
    return found


def contradicting(cls: str, value: str) -> tuple[str, ...]:
    """Values that contradict ``value`` of class ``cls`` (lexicon order)."""
    if cls in ("number", "age"):
        return lexicon.contradicting_numbers(value)
    if cls == "place":
        return tuple(p for p in lexicon.PLACES if p != value)
    return tuple(lexicon.CLASSES[cls].get(value, ()))


def _occurs(value: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def candidates(
    mentions: Sequence[Mention], sentences: Sequence[str], min_sentences: int
) -> list[Candidate]:
    """The story's candidates (module docstring), in order of class, value and sentence."""
    bounds = act_bounds(len(sentences), min_sentences)
    if bounds is None:
        return []
    act2 = bounds[0]
    story = " ".join(sentences)
    groups: dict[tuple[str, str], list[Mention]] = defaultdict(list)
    for m in mentions:
        groups[(m.cls, m.value)].append(m)
    found: list[Candidate] = []
    for (cls, value), group in sorted(groups.items()):
        before = {m.sentence for m in group if m.sentence < act2}
        later = sorted(m.sentence for m in group if m.sentence >= act2)
        if len(before) != 1 or not later:
            continue
        replacements = tuple(v for v in contradicting(cls, value) if not _occurs(v, story))
        if not replacements:
            continue
        found.append(Candidate(cls, value, before.pop(), later[0], tuple(group), replacements))
    return found


def _replace(sentence: str, spans: Sequence[Mention], value: str) -> str:
    for m in sorted(spans, key=lambda m: m.start, reverse=True):
        sentence = sentence[: m.start] + lexicon.match_case(m.text, value) + sentence[m.end :]
    return sentence


def versions(
    sentences: Sequence[str], candidate: Candidate, new_value: str
) -> dict[str, list[str]]:
    """The O, F, C and D sentence lists of one edit."""
    c, e = candidate.changed, candidate.establishing
    first = min((m for m in candidate.mentions if m.sentence == c), key=lambda m: m.start)
    flawed = list(sentences)
    flawed[c] = _replace(sentences[c], [first], new_value)
    consistent = [
        _replace(s, [m for m in candidate.mentions if m.sentence == i], new_value)
        for i, s in enumerate(sentences)
    ]
    return {
        "O": list(sentences),
        "F": flawed,
        "C": consistent,
        "D": [s for i, s in enumerate(flawed) if i != e],
    }


def choose(story_id: str, found: Sequence[Candidate], seed: int) -> tuple[Candidate, str]:
    """The seeded choice of one candidate and its new value."""
    rng = item_rng(seed, story_id)
    candidate = found[int(rng.integers(len(found)))]
    return candidate, candidate.replacements[int(rng.integers(len(candidate.replacements)))]


def _rows(edit: Edit, original: str, provenance: Mapping[str, Any]) -> list[dict[str, Any]]:
    cand = edit.candidate
    c, e = cand.changed, cand.establishing
    proposition = (
        f"{cand.cls} {cand.value!r} (sentence {e + 1}); line {c + 1} changed to {edit.new_value!r}"
    )
    rows = []
    for version in VERSIONS:
        sents = edit.versions[version]
        flawed = version == "F"
        rows.append(
            version_row(
                edit.story_id,
                MAKER,
                version,
                sents,
                error_lines=[c + 1] if flawed else [],
                contr_lines=[e + 1] if flawed else [],
                target_idx=c - 1 if version == "D" else c,
                attribute_class=cand.cls,
                proposition=proposition,
                original=original,
                verification="exact",
                provenance=json.dumps(dict(provenance), sort_keys=True),
            )
        )
    return rows


def _skipped(story_id: str, reason: str) -> dict[str, Any]:
    """The PLOT_HOLE_SKIPPED row of a story this maker leaves alone, with the reason."""
    return tables.PLOT_HOLE_SKIPPED.row(story_id=story_id, maker=MAKER, reason=reason)


def not_edited_types(stories: pd.DataFrame, story_types: Sequence[str] | None) -> dict[str, str]:
    """story_id → why the makers leave it alone, for each story whose ``story_type`` is not
    one of ``story_types`` (None: every story may be edited; ``plot_holes.originals``)."""
    if story_types is None:
        return {}
    allowed = set(story_types)
    return {
        str(sid): (
            f"story_type {kind!r} is not edited (plot_holes.originals: human edits only "
            f"{', '.join(sorted(allowed))})"
        )
        for sid, kind in zip(stories["story_id"], stories["story_type"], strict=True)
        if kind not in allowed
    }


def sentence_lists(sentences: pd.DataFrame) -> dict[Any, list[str]]:
    """story_id → its sentences' text in ``sentence_idx`` order, from a SENTENCES table (the
    stories in the table's order)."""
    return {
        sid: group.sort_values("sentence_idx")["text"].tolist()
        for sid, group in sentences.groupby("story_id", sort=False)
    }


def _coverage_rows(
    corpus: str, coverage: Mapping[str, int], n_stories: int, n_eligible: int
) -> list[dict[str, Any]]:
    """PLOT_HOLE_COVERAGE rows: for each attribute class and ``any``, the eligible stories
    with a candidate of it (``coverage``: class → stories) and their share of the
    ``n_eligible`` (NaN when none is eligible)."""
    return [
        tables.PLOT_HOLE_COVERAGE.row(
            corpus=corpus,
            attribute_class=cls,
            n_stories=n_stories,
            n_eligible=n_eligible,
            n_with_candidate=coverage.get(cls, 0),
            share=coverage.get(cls, 0) / n_eligible if n_eligible else float("nan"),
        )
        for cls in (*lexicon.CLASS_NAMES, "any")
    ]


def _length_skip(sents: Sequence[str], min_sentences: int, max_words: int | None) -> str | None:
    """Why a story of these sentences is too short for three acts or longer than ``max_words``
    whitespace words (None: no limit), or None when its length allows an edit."""
    if act_bounds(len(sents), min_sentences) is None:
        return (
            f"too short for three acts ({len(sents)} sentences, "
            f"at least {max(3, min_sentences)} needed)"
        )
    words = count_words(*sents)
    if max_words is not None and words > max_words:
        return f"longer than plot_holes.max_words ({words} > {max_words} words)"
    return None


def story_candidates(nlp: Any, sents: Sequence[str], min_sentences: int) -> list[Candidate]:
    """The candidates of one story's sentences, parsed with ``nlp`` (tags and entities)."""
    mentions = [m for i, doc in enumerate(nlp.pipe(sents)) for m in find_mentions(doc, i)]
    return candidates(mentions, sents, min_sentences)


def _edit_story(
    story_id: str,
    sents: Sequence[str],
    found: Sequence[Candidate],
    classes: Sequence[str] | None,
    seed: int,
) -> Edit | str:
    """The seeded edit of one story from its candidates ``found`` of the attribute
    ``classes`` (None: all), or why the story has none."""
    if not found:
        return "no usable attribute (no value of act 1 repeated later)"
    usable = [c for c in found if classes is None or c.cls in classes]
    if not usable:
        return "no attribute of the classes used"
    candidate, new_value = choose(story_id, usable, seed)
    return Edit(story_id, candidate, new_value, versions(sents, candidate, new_value))


def make_controlled(
    sentences: pd.DataFrame,
    stories: pd.DataFrame,
    nlp: Any,
    *,
    seed: int,
    min_sentences: int,
    max_words: int | None,
    corpus: str,
    classes: Sequence[str] | None = None,
    story_types: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Made stories, skipped stories and coverage of one corpus: the rows of
    PLOT_HOLE_STORIES, PLOT_HOLE_SKIPPED and PLOT_HOLE_COVERAGE.

    ``sentences``: the SENTENCES table; ``stories``: the STORIES table (the original text and
    the story order; ``story_type`` is read when ``story_types`` is given); ``nlp``: a full spaCy
    pipeline (tags and entities). Stories too short for three acts, longer than ``max_words``
    whitespace words (None: no limit) or with no candidate are skipped with the reason.
    ``classes``: the attribute classes an edit may use (None: all; coverage is counted over all
    classes either way). ``story_types``: the story types that may be edited (None: all;
    ``plot_holes.originals``, :func:`storyflow.plan.plot_holes.edited_story_types`); the
    others are skipped with the reason and are not eligible.
    """
    by_story = sentence_lists(sentences)
    provenance = {"maker": MAKER, "seed": seed, "min_sentences": min_sentences}
    made, skipped = [], []
    coverage: Counter[str] = Counter()  # class → eligible stories with a candidate of it
    n_eligible = 0
    ids = [str(s) for s in stories["story_id"]]
    texts = dict(zip(ids, stories["text"], strict=True))
    not_edited = not_edited_types(stories, story_types)
    edit: Edit | str | None  # a story's edit, or the reason it is skipped
    bar = LoggedBar(ids, desc=f"controlled maker ({corpus})", unit="story", mininterval=5.0)
    for story_id in bar:
        sents = by_story.get(story_id, [])
        edit = not_edited.get(story_id) or _length_skip(sents, min_sentences, max_words)
        if edit is None:  # eligible: a candidate may be drawn
            n_eligible += 1
            found = story_candidates(nlp, sents, min_sentences)
            coverage.update({c.cls for c in found})
            edit = _edit_story(story_id, sents, found, classes, seed)
        if isinstance(edit, str):
            skipped.append(_skipped(story_id, edit))
            continue
        coverage["any"] += 1
        made.extend(_rows(edit, texts[story_id], provenance))
    log.info(
        "%s: %d stories, %d eligible, %d made, %d skipped",
        corpus,
        len(ids),
        n_eligible,
        coverage.get("any", 0),
        len(skipped),
    )
    return (
        tables.PLOT_HOLE_STORIES.frame(made),
        tables.PLOT_HOLE_SKIPPED.frame(skipped),
        tables.PLOT_HOLE_COVERAGE.frame(_coverage_rows(corpus, coverage, len(ids), n_eligible)),
    )
