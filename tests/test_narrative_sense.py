"""Narrative-sense relations: trigram rule, PMI table, scoring, threshold, workflow."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from storyflow.measures.narrative_sense import pmi as ns


def lemma_table(stories: dict[str, list[tuple[str, int]]], group: str = "g") -> pd.DataFrame:
    """Hand-made lemma table: story id -> [(lemma, word position), ...]."""
    return pd.DataFrame(
        {
            "story_id": list(stories),
            "group": group,
            "n_words": [max((p for _, p in s), default=-1) + 1 for s in stories.values()],
            "lemmas": [[w for w, _ in s] for s in stories.values()],
            "positions": [[p for _, p in s] for s in stories.values()],
        }
    )


def pair_count(table: ns.PairTable, w1: str, w2: str) -> int:
    ids = dict(zip(table.vocabulary["lemma"], table.vocabulary["id"], strict=True))
    i, j = sorted((ids[w1], ids[w2]))
    hit = table.pairs[(table.pairs["id1"] == i) & (table.pairs["id2"] == j)]
    return int(hit["n_stories"].sum())


def test_pairs_inside_one_trigram_do_not_count() -> None:
    stories = {
        "adjacent": [("dog", 0), ("bark", 1)],
        "two_apart": [("dog", 0), ("bark", 2)],
        "far": [("dog", 0), ("cat", 1), ("bark", 7)],
        # one occurrence of dog is adjacent to bark, another is far: the pair counts
        "both": [("dog", 0), ("bark", 1), ("dog", 9)],
    }
    table = ns.count_pairs(lemma_table(stories), min_stories=1)
    assert pair_count(table, "dog", "bark") == 2  # "far" and "both" only
    assert pair_count(table, "dog", "cat") == 0  # adjacent in its only story
    assert pair_count(table, "cat", "bark") == 1
    codes = ns.story_pair_codes(np.array([0, 1]), np.array([0, 2]), np.array([0, 2]), 10)
    assert list(codes) == []
    codes = ns.story_pair_codes(np.array([0, 1]), np.array([0, 3]), np.array([0, 3]), 10)
    assert list(codes) == [1]


def test_vocabulary_cut_and_pmi_by_hand() -> None:
    stories = {f"s{k}": [("sun", 0), ("rain", 5)] for k in range(3)}
    stories |= {f"t{k}": [("sun", 0), ("moon", 4)] for k in range(2)}
    stories["u"] = [("moon", 0), ("comet", 4)]
    table = ns.count_pairs(lemma_table(stories), min_stories=3)
    vocab = table.vocabulary.set_index("lemma")["n_stories"].to_dict()
    assert vocab == {"moon": 3, "rain": 3, "sun": 5}  # comet in 1 story: cut
    pmi = dict(
        zip(
            zip(table.pairs["id1"], table.pairs["id2"], strict=True),
            table.pairs["pmi"],
            strict=True,
        )
    )
    ids = table.vocabulary.set_index("lemma")["id"]
    assert pmi[tuple(sorted((ids["sun"], ids["rain"])))] == pytest.approx(math.log(3 / (5 * 3)))
    assert pmi[tuple(sorted((ids["sun"], ids["moon"])))] == pytest.approx(math.log(2 / (5 * 3)))
    assert table.floor == pytest.approx(math.log(2 / 15))
    assert len(table.pairs) == 2  # moon-rain never co-occur


def test_scores_use_the_floor_for_unseen_pairs_and_count_pairs() -> None:
    stories = {f"s{k}": [("sun", 0), ("rain", 5)] for k in range(3)}
    stories |= {f"t{k}": [("sun", 0), ("moon", 4)] for k in range(2)}
    table = ns.count_pairs(lemma_table(stories), min_stories=1)
    floor = math.log(2 / (5 * 2))
    target = lemma_table({"x": [("sun", 0), ("rain", 1), ("moon", 2), ("rare", 3), ("sun", 4)]})
    scores = ns.score_stories(target, table, top_pairs=1).iloc[0]
    assert scores["n_lemmas"] == 3  # rare not in the vocabulary, sun counted once
    assert scores["n_pairs"] == 3
    expected = sorted([math.log(3 / 15), floor, math.log(2 / 10)], reverse=True)
    assert list(scores["pair_pmi"]) == pytest.approx(expected, rel=1e-6)
    assert scores["seen_share"] == pytest.approx(2 / 3)
    assert scores["median_pmi"] == pytest.approx(expected[1], rel=1e-6)
    assert scores["median_pmi_top"] == pytest.approx(expected[0], rel=1e-6)
    assert table.floor == pytest.approx(floor)  # moon-rain unseen -> the table minimum


def test_truncation_keeps_the_first_word_tokens() -> None:
    table = lemma_table({"x": [("a", 0), ("b", 3), ("c", 10)]})
    table["n_words"] = [12]
    out = ns.truncate(table, 4).iloc[0]
    assert list(out["lemmas"]) == ["a", "b"] and out["n_words"] == 4


def association_corpus() -> ns.PairTable:
    """Two topics whose words always co-occur (far apart), never across topics."""
    sea = ["boat", "wave", "sail", "fish", "tide", "shore"]
    sky = ["cloud", "wind", "storm", "thunder", "rain", "sun"]
    stories = {}
    for k in range(10):
        for name, words in (("sea", sea), ("sky", sky)):
            stories[f"{name}{k}"] = [(w, 4 * i) for i, w in enumerate(words)]
    # one story crossing the topics: cross pairs seen once score lowest (the floor)
    stories["cross"] = [(w, 4 * i) for i, w in enumerate(sea + sky)]
    return ns.count_pairs(lemma_table(stories), min_stories=1)


def test_threshold_separates_associated_from_unrelated_words() -> None:
    table = association_corpus()
    coherent = [("boat", 0), ("wave", 4), ("sail", 8), ("fish", 12), ("tide", 16)]
    mixed = [("boat", 0), ("cloud", 4), ("wave", 8), ("wind", 12), ("sail", 16), ("storm", 20)]
    target = lemma_table(
        {"coherent": coherent, "mixed": mixed, "other": [("rain", 0), ("sun", 4), ("fish", 8)]}
    )
    scores = ns.score_stories(target, table)
    # a random story drawn from the group's union mixes topics; the coherent one beats it
    unions = ns.narrative_sense_threshold(scores, table, alpha=0.10, seed=1).set_index("story_id")
    assert bool(unions.loc["coherent", "exceeds"]) and unions.loc["coherent", "p_value"] < 0.10
    assert not bool(unions.loc["mixed", "exceeds"])
    # seeded: the same again; a story's result does not depend on the other stories
    again = ns.narrative_sense_threshold(scores, table, alpha=0.10, seed=1).set_index("story_id")
    assert again["p_value"].equals(unions["p_value"])
    summary = ns.group_table(unions.reset_index())
    assert summary.loc[0, "n_exceeding"] == int(unions["exceeds"].sum())


def test_threshold_result_of_a_story_does_not_depend_on_the_others() -> None:
    table = association_corpus()
    stories = {
        "a": [("boat", 0), ("wave", 4), ("sail", 8), ("cloud", 12)],
        "b": [("fish", 0), ("tide", 4), ("shore", 8), ("wind", 12)],
    }
    scores = ns.score_stories(lemma_table(stories), table)
    both = ns.narrative_sense_threshold(scores, table, seed=3).set_index("story_id")
    # same group union, other order: the same draws and p-values
    reordered = ns.narrative_sense_threshold(scores.iloc[::-1], table, seed=3)
    assert reordered.set_index("story_id")["p_value"].loc[["a", "b"]].tolist() == pytest.approx(
        both["p_value"].loc[["a", "b"]].tolist()
    )


def test_too_few_lemmas_are_recorded_not_crashed_on() -> None:
    table = association_corpus()
    scores = ns.score_stories(lemma_table({"short": [("boat", 0)], "empty": []}), table)
    out = ns.narrative_sense_threshold(scores, table)
    assert out["p_value"].isna().all() and not out["exceeds"].any()
    assert set(out["reason"]) == {"fewer than 2 recognized lemmas"}


def test_lemmatizer_drops_function_words_names_and_numbers(nlp_lemmas) -> None:
    n, lemmas, positions = ns.content_lemmas(
        nlp_lemmas("John bought 3 red apples, and the dogs were barking loudly."), None
    )
    assert "john" not in lemmas and "3" not in lemmas and "the" not in lemmas
    assert {"buy", "apple", "dog", "bark"} <= set(lemmas)
    assert n == 11  # word tokens: punctuation not counted
    assert positions == sorted(positions)
    n, lemmas, _ = ns.content_lemmas(nlp_lemmas("red apples fall down on green grass"), 3)
    assert n == 3 and "grass" not in lemmas


@pytest.fixture(scope="module")
def nlp_lemmas():
    return ns.load_lemmatizer("en_core_web_sm")


@pytest.mark.slow
def test_narrative_sense_stage_on_real_data(snakemake, tmp_path: Path) -> None:
    change = tmp_path / "ns.yaml"
    change.write_text("narrative_sense:\n  enabled: true\n  limit: 25\n  min_stories: 2\n")
    targets = [
        "results/hippocorpus/narrative_sense/tables/narrative_sense.csv",
        "results/hanna/narrative_sense/tables/narrative_sense.csv",
        "results/hanna/narrative_sense/figures/pair_scores.png",
    ]
    snakemake(tmp_path / "run", "--cores", "2", configfiles=[change], targets=targets)
    run = tmp_path / "run"
    vocab = pd.read_parquet(run / "results/narrative_sense/vocabulary.parquet")
    assert (vocab["n_stories"] >= 2).all() and len(vocab) > 100
    hanna = pd.read_csv(run / "results/hanna/narrative_sense/tables/narrative_sense.csv")
    assert set(hanna["group"]) == {"Human", *ns_models()}
    assert (hanna["n_stories"] == 25).all()
    assert hanna["share_exceeding"].between(0, 1).all()
    scores = pd.read_parquet(run / "results/hanna/narrative_sense/story_scores.parquet")
    assert (scores["n_words"] <= 150).all()
    assert (scores["n_pairs"] == scores["n_lemmas"] * (scores["n_lemmas"] - 1) // 2).all()
    hippo = pd.read_csv(run / "results/hippocorpus/narrative_sense/tables/narrative_sense.csv")
    assert set(hippo["group"]) == {"recalled", "retold", "imagined"}
    assert (run / "results/hanna/narrative_sense/figures/pair_scores.pdf").stat().st_size > 1000


def ns_models() -> set[str]:
    return {
        "Llama-7b",
        "Mistral-7b",
        "Beluga-13b",
        "OrcaPlatypus-13b",
        "LlamaInstruct-30b",
        "Platypus2-70b",
    }
