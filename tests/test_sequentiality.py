"""Sentence- and story-level sequentiality on a hand-worked example."""

from __future__ import annotations

import pandas as pd
import pytest

from storyflow.measures.sequentiality.scores import sentence_sequentiality, story_sequentiality

# Hand-worked example: model "m", histories "0", "1", "full" (nats/token).
#
# Story A (recalled), formulation "topic":
#   sentence | h=0 (NLL_T) | h=1 (NLL_C) | full (NLL_C) | SEQ h=1 | SEQ full
#   0        | 3.0         | 3.0         | 3.0          | 0.0     | 0.0      (no history)
#   1        | 4.0         | 3.5         | 3.5          | 0.5     | 0.5
#   2        | 2.0         | 1.8         | 1.0          | 0.2     | 1.0
#   story means: SEQ h=1 = (0 + 0.5 + 0.2)/3 = 0.7/3 = 0.233333
#                SEQ full = (0 + 0.5 + 1.0)/3 = 0.5
#                nll_base = (3 + 4 + 2)/3 = 3.0
#                nll_context h=1 = (3 + 3.5 + 1.8)/3 = 8.3/3 = 2.766667; full = 7.5/3 = 2.5
#
# Story B (imagined, no topic), formulation "context":
#   sentence | h=0 (NLL_∅) | h=1 (NLL_C∅) | full (NLL_C∅) | SEQ' h=1 | SEQ' full
#   0        | 5.0         | 5.0          | 5.0           | 0.0      | 0.0
#   1        | 4.5         | 4.75         | 4.75          | -0.25    | -0.25  (context hurts)
#   2        | 4.0         | 3.0          | 3.5 (trunc.)  | 1.0      | 0.5
#   story means: SEQ' h=1 = (0 - 0.25 + 1.0)/3 = 0.25; SEQ' full = (0 - 0.25 + 0.5)/3 = 0.083333
#                nll_base = 13.5/3 = 4.5; nll_context h=1 = 12.75/3 = 4.25;
#                nll_context full = 13.25/3 = 4.416667
NLL_VALUES = {
    ("A", "topic"): [(3.0, 3.0, 3.0), (4.0, 3.5, 3.5), (2.0, 1.8, 1.0)],
    ("B", "context"): [(5.0, 5.0, 5.0), (4.5, 4.75, 4.75), (4.0, 3.0, 3.5)],
}


def make_nll() -> pd.DataFrame:
    rows = []
    for (story, formulation), sentences in NLL_VALUES.items():
        for idx, values in enumerate(sentences):
            for history, nll in zip(["0", "1", "full"], values, strict=True):
                n_history = {"0": 0, "1": min(idx, 1), "full": idx}[history]
                rows.append(
                    {
                        "story_id": story,
                        "sentence_idx": idx,
                        "model": "m",
                        "formulation": formulation,
                        "history": history,
                        "n_history": n_history,
                        "n_tokens": 10,
                        "nll": nll,
                        "truncated": story == "B" and idx == 2 and history == "full",
                    }
                )
    return pd.DataFrame(rows)


STORIES = pd.DataFrame(
    {
        "story_id": ["A", "B"],
        "story_type": ["recalled", "imagined"],
        "text": ["...", "..."],
        "topic": ["a day out", None],
        "has_topic": [True, False],
    }
)
COUNTS = pd.DataFrame(
    {"story_id": ["A", "B"], "story_type": ["recalled", "imagined"], "n_sentences": [3, 3]}
)


def test_sentence_sequentiality_hand_example() -> None:
    out = sentence_sequentiality(make_nll())
    assert list(out.columns) == [
        "story_id",
        "sentence_idx",
        "model",
        "formulation",
        "history",
        "n_history",
        "truncated",
        "nll_base",
        "nll_context",
        "seq",
    ]
    assert len(out) == 12  # 2 stories x 3 sentences x 2 non-zero histories
    assert "0" not in set(out["history"])
    got = out.set_index(["story_id", "sentence_idx", "history"])["seq"]
    expected = {
        ("A", 0, "1"): 0.0,
        ("A", 0, "full"): 0.0,
        ("A", 1, "1"): 0.5,
        ("A", 1, "full"): 0.5,
        ("A", 2, "1"): 0.2,
        ("A", 2, "full"): 1.0,
        ("B", 0, "1"): 0.0,
        ("B", 1, "1"): -0.25,
        ("B", 2, "1"): 1.0,
        ("B", 2, "full"): 0.5,
    }
    for key, value in expected.items():
        assert got[key] == pytest.approx(value)
    row = out[(out.story_id == "A") & (out.sentence_idx == 2) & (out.history == "full")].iloc[0]
    assert row["nll_base"] == pytest.approx(2.0)
    assert row["nll_context"] == pytest.approx(1.0)
    assert row["n_history"] == 2
    assert set(out.loc[out["truncated"], "story_id"]) == {"B"}


def test_sentence_sequentiality_sorts_histories_numerically() -> None:
    nll = make_nll()
    extra = nll[nll["history"] == "1"].assign(history="10")
    out = sentence_sequentiality(pd.concat([nll, extra], ignore_index=True))
    first = out[(out.story_id == "A") & (out.sentence_idx == 1)]
    assert list(first["history"]) == ["1", "10", "full"]


def test_missing_base_row_is_an_error() -> None:
    nll = make_nll()
    nll = nll[~((nll.story_id == "A") & (nll.sentence_idx == 1) & (nll.history == "0"))]
    with pytest.raises(ValueError, match=r"no history '0' row.*'story_id': 'A'.*'sentence_idx': 1"):
        sentence_sequentiality(nll)


def test_duplicate_rows_are_an_error() -> None:
    nll = make_nll()
    with pytest.raises(ValueError, match="duplicated key"):
        sentence_sequentiality(pd.concat([nll, nll.iloc[[4]]], ignore_index=True))


def test_story_sequentiality_hand_example() -> None:
    story = story_sequentiality(sentence_sequentiality(make_nll()), STORIES, COUNTS)
    assert list(story.columns) == [
        "story_id",
        "story_type",
        "model",
        "formulation",
        "history",
        "n_sentences",
        "seq",
        "nll_base",
        "nll_context",
        "any_truncated",
    ]
    assert len(story) == 4
    got = story.set_index(["story_id", "history"])
    expected = {
        # (story, history): (seq, nll_base, nll_context, any_truncated)
        ("A", "1"): (0.7 / 3, 3.0, 8.3 / 3, False),
        ("A", "full"): (0.5, 3.0, 2.5, False),
        ("B", "1"): (0.25, 4.5, 4.25, False),
        ("B", "full"): (0.25 / 3, 4.5, 13.25 / 3, True),
    }
    for key, (seq, base, context, truncated) in expected.items():
        assert got.loc[key, "seq"] == pytest.approx(seq)
        assert got.loc[key, "nll_base"] == pytest.approx(base)
        assert got.loc[key, "nll_context"] == pytest.approx(context)
        # decomposition: the story mean of seq is the difference of the two story means
        assert got.loc[key, "seq"] == pytest.approx(base - context)
        assert bool(got.loc[key, "any_truncated"]) is truncated
    assert got.loc[("A", "1"), "story_type"] == "recalled"
    assert got.loc[("B", "1"), "formulation"] == "context"
    assert set(story["n_sentences"]) == {3}


def test_story_with_unscored_sentence_is_an_error() -> None:
    seq = sentence_sequentiality(make_nll())
    seq = seq[~((seq.story_id == "A") & (seq.sentence_idx == 2))]
    with pytest.raises(ValueError, match="do not have all their sentences scored"):
        story_sequentiality(seq, STORIES, COUNTS)


def test_story_missing_from_stories_table_is_an_error() -> None:
    seq = sentence_sequentiality(make_nll())
    with pytest.raises(ValueError, match=r"missing from the stories table.*\['B'\]"):
        story_sequentiality(seq, STORIES.iloc[:1], COUNTS)
