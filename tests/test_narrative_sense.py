"""Narrative-sense relations: trigram rule, PMI table, scoring, random story, short-set filter,
cross-fitting, threshold, workflow."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import run_script

from storyflow.measures.narrative_sense import length_filter
from storyflow.measures.narrative_sense import pmi as ns
from storyflow.measures.narrative_sense import threshold as th


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


NO_EXCLUSIONS = pd.DataFrame(columns=list(length_filter.EXCLUSION_COLUMNS))


def assess(
    target: pd.DataFrame, table: ns.PairTable, *, seed: int, weighting: str = "stories"
) -> pd.DataFrame:
    """The threshold test of every story of ``target`` (nothing left out)."""
    return th.assess(
        target, NO_EXCLUSIONS, table, top_pairs=100, weighting=weighting, alpha=0.10, seed=seed
    )


def test_threshold_separates_associated_from_unrelated_words() -> None:
    table = association_corpus()
    coherent = [("boat", 0), ("wave", 4), ("sail", 8), ("fish", 12), ("tide", 16)]
    mixed = [("boat", 0), ("cloud", 4), ("wave", 8), ("wind", 12), ("sail", 16), ("storm", 20)]
    target = lemma_table(
        {"coherent": coherent, "mixed": mixed, "other": [("rain", 0), ("sun", 4), ("fish", 8)]}
    )
    # a random story drawn from the group's pooled stories mixes topics; the coherent one beats it
    unions = assess(target, table, seed=1).set_index("story_id")
    assert bool(unions.loc["coherent", "exceeds"]) and unions.loc["coherent", "p_value"] < 0.10
    assert not bool(unions.loc["mixed", "exceeds"])
    # seeded: the same again; a story's result does not depend on the other stories
    again = assess(target, table, seed=1).set_index("story_id")
    assert again["p_value"].equals(unions["p_value"])
    summary = th.group_table(unions.reset_index())
    assert summary.loc[0, "n_exceeding"] == int(unions["exceeds"].sum())


def test_threshold_result_of_a_story_does_not_depend_on_the_others() -> None:
    table = association_corpus()
    stories = {
        "a": [("boat", 0), ("wave", 4), ("sail", 8), ("cloud", 12)],
        "b": [("fish", 0), ("tide", 4), ("shore", 8), ("wind", 12)],
    }
    target = lemma_table(stories)
    both = assess(target, table, seed=3).set_index("story_id")
    # same group pool, other order: the same draws and p-values
    reordered = assess(target.iloc[::-1], table, seed=3)
    assert reordered.set_index("story_id")["p_value"].loc[["a", "b"]].tolist() == pytest.approx(
        both["p_value"].loc[["a", "b"]].tolist()
    )


def test_too_few_lemmas_are_recorded_not_crashed_on() -> None:
    table = association_corpus()
    out = assess(lemma_table({"short": [("boat", 0)], "empty": []}), table, seed=0)
    assert out["p_value"].isna().all() and not out["exceeds"].any()
    assert set(out["reason"]) == {"fewer than 2 recognized lemmas"}


def test_lemmatizer_drops_function_words_names_and_numbers(nlp_lemmas) -> None:
    n, lemmas, positions = ns.content_lemmas(
        nlp_lemmas("John bought 3 red apples, and the dogs were barking loudly."),
        None,
        count_punctuation=False,
    )
    assert "john" not in lemmas and "3" not in lemmas and "the" not in lemmas
    assert {"buy", "apple", "dog", "bark"} <= set(lemmas)
    assert n == 11  # word tokens: punctuation not counted
    assert positions == sorted(positions)
    n, lemmas, _ = ns.content_lemmas(
        nlp_lemmas("red apples fall down on green grass"), 3, count_punctuation=False
    )
    assert n == 3 and "grass" not in lemmas


# ----------------------------------------------------------------------------- the random story


def frequency_group() -> tuple[pd.DataFrame, ns.PairTable]:
    """A group of 20 stories: "common" in all of them (three times in each of the first five),
    "mid" in 10, "rare" in 2, and a filler lemma of its own in each story; every lemma is in
    the vocabulary."""
    stories = {}
    for k in range(20):
        words = [("common", 0), (f"filler{k}", 4)]
        if k < 5:
            words += [("common", 8), ("common", 12)]
        if k < 10:
            words.append(("mid", 16))
        if k < 2:
            words.append(("rare", 20))
        stories[f"s{k}"] = words
    lemmas = lemma_table(stories)
    return lemmas, ns.count_pairs(lemmas, min_stories=1)


def test_the_word_pool_weights_a_lemma_by_the_stories_or_tokens_that_hold_it() -> None:
    lemmas, table = frequency_group()
    lemma_of = dict(zip(table.vocabulary["id"], table.vocabulary["lemma"], strict=True))

    def weights(weighting: str) -> dict[str, float]:
        pool = th.word_pools(lemmas, table, weighting)["g"]
        return {lemma_of[i]: w for i, w in zip(pool.ids, pool.weights, strict=True)}

    by_stories, by_tokens, uniform = weights("stories"), weights("tokens"), weights("uniform")
    assert (by_stories["common"], by_stories["mid"], by_stories["rare"]) == (20, 10, 2)
    assert by_stories["filler3"] == 1 and len(by_stories) == 23
    # tokens: common occurs 3 times in each of the first five stories, once in the others
    assert (by_tokens["common"], by_tokens["mid"], by_tokens["rare"]) == (30, 10, 2)
    assert set(uniform.values()) == {1.0}
    with pytest.raises(ValueError, match="weighting 'words'"):
        th.word_pools(lemmas, table, "words")


def test_random_story_draws_follow_the_groups_story_frequencies() -> None:
    lemmas, table = frequency_group()
    pool = th.word_pools(lemmas, table, "stories")["g"]
    common = int(table.vocabulary.set_index("lemma").loc["common", "id"])
    rare = int(table.vocabulary.set_index("lemma").loc["rare", "id"])
    total = pool.weights.sum()  # 20 + 10 + 2 + 20 fillers = 52
    n = 4000
    first = np.array([th.random_story(pool, 1, 7, f"story{k}")[0] for k in range(n)])
    # one-word random stories: each lemma comes up in proportion to the stories holding it
    assert total == 52
    assert (first == common).mean() == pytest.approx(20 / 52, abs=0.025)
    assert (first == rare).mean() == pytest.approx(2 / 52, abs=0.012)
    # the uniform draw of the earlier code gives every distinct lemma 1/23
    flat = th.word_pools(lemmas, table, "uniform")["g"]
    uniform = np.array([th.random_story(flat, 1, 7, f"story{k}")[0] for k in range(n)])
    assert (uniform == common).mean() == pytest.approx(1 / 23, abs=0.012)
    # a random story has distinct lemmas, as many as asked; the draw is fixed by seed and id
    drawn = th.random_story(pool, 23, 7, "all")
    assert sorted(drawn) == sorted(pool.ids)
    assert list(th.random_story(pool, 5, 7, "x")) == list(th.random_story(pool, 5, 7, "x"))
    assert list(th.random_story(pool, 5, 7, "x")) != list(th.random_story(pool, 5, 8, "x"))


def test_a_frequency_weighted_random_story_is_made_of_the_groups_common_words() -> None:
    """Stories of the group are two topics plus one-off words: the uniform draw fills the random
    story with one-off words (unseen pairs, the floor), the paper's draw with the topic words."""
    sea = ["boat", "wave", "sail", "fish", "tide", "shore"]
    stories = {
        f"s{k}": [(w, 4 * i) for i, w in enumerate([*sea, f"odd{k}", f"once{k}"])]
        for k in range(30)
    }
    lemmas = lemma_table(stories)
    table = ns.count_pairs(lemmas, min_stories=1)
    ids = table.vocabulary.set_index("lemma")["id"]
    topic = set(ids[sea])
    for weighting, at_least, at_most in (("stories", 0.5, 1.0), ("uniform", 0.0, 0.3)):
        pool = th.word_pools(lemmas, table, weighting)["g"]
        share = np.mean(
            [
                len(topic & set(th.random_story(pool, 8, 1, f"s{k}").tolist())) / 8
                for k in range(200)
            ]
        )
        assert at_least <= share <= at_most, (weighting, share)


# ----------------------------------------------------------------------------- cuts and filters


def test_reference_stories_are_cut_before_pairs_are_counted(tmp_path: Path) -> None:
    stories = {f"s{k}": [("dog", 10), ("bark", 120), ("moon", 200)] for k in range(5)}
    path = tmp_path / "lemmas.parquet"
    lemma_table(stories).to_parquet(path)
    counted = {}
    for cut in (None, 150):
        out = {"pairs": str(tmp_path / f"pairs{cut}.parquet")}
        out["vocabulary"] = str(tmp_path / f"vocabulary{cut}.parquet")
        run_script(
            "count_word_pairs",
            log=[str(tmp_path / f"count{cut}.log")],
            input=SimpleNamespace(lemmas=[str(path)]),
            output=SimpleNamespace(**out),
            params=SimpleNamespace(min_stories=5, reference_max_tokens=cut),
        )
        counted[cut] = ns.PairTable.load(out["pairs"], out["vocabulary"])
    assert set(counted[None].vocabulary["lemma"]) == {"dog", "bark", "moon"}
    assert pair_count(counted[None], "dog", "moon") == 5
    # cut at 150 tokens: moon (position 200) is gone from every reference story
    assert set(counted[150].vocabulary["lemma"]) == {"dog", "bark"}
    assert pair_count(counted[150], "dog", "bark") == 5
    assert "cut to 150 tokens" in (tmp_path / "count150.log").read_text()


def test_punctuation_counts_as_tokens_when_asked(nlp_lemmas) -> None:
    doc = nlp_lemmas("Dogs, cats, birds and horses ran.")
    n, lemmas, positions = ns.content_lemmas(doc, None, count_punctuation=True)
    assert n == 9 and positions[:3] == [0, 2, 4]  # the commas and the full stop are tokens
    n, same, positions = ns.content_lemmas(doc, None, count_punctuation=False)
    assert n == 6 and positions[:3] == [0, 1, 2] and same == lemmas
    n, _, _ = ns.content_lemmas(doc, 4, count_punctuation=True)
    assert n == 4  # "Dogs , cats ,"


def hanna_like() -> pd.DataFrame:
    """Three prompts, each with a human and two model stories; token counts chosen by hand."""
    lengths = {0: (300, 200, 160), 1: (300, 149, 400), 2: (90, 200, 120)}
    rows = []
    for prompt, counts in lengths.items():
        for group, n in zip(("Human", "m1", "m2"), counts, strict=True):
            rows.append((f"{group}-{prompt}", group, n, ["w"], [0], prompt))
    return pd.DataFrame(
        rows, columns=["story_id", "group", "n_words", "lemmas", "positions", "prompt_id"]
    )


def test_a_prompt_set_with_a_short_story_is_left_out_whole() -> None:
    lemmas = hanna_like()
    out = length_filter.short_sets(lemmas, 150)
    assert list(out.columns) == list(length_filter.EXCLUSION_COLUMNS)
    # prompt 0: all at least 150; prompt 1: m1 has 149; prompt 2: Human 90 and m2 120
    assert sorted(out["story_id"]) == sorted(["Human-1", "m1-1", "m2-1", "Human-2", "m1-2", "m2-2"])
    reason = out.set_index("story_id")["reason"]
    assert reason["Human-1"] == "prompt set 1: m1-1 has 149 tokens (< 150)"
    assert reason["m1-2"] == "prompt set 2: Human-2 has 90, m2-2 has 120 tokens (< 150)"
    assert out.set_index("story_id").loc["m1-2", "n_words"] == 200
    assert length_filter.short_sets(lemmas, None).empty
    assert length_filter.short_sets(lemmas, 90).empty
    # without prompts, each story is its own set
    alone = length_filter.short_sets(lemmas.drop(columns="prompt_id"), 150)
    assert sorted(alone["story_id"]) == ["Human-2", "m1-1", "m2-2"]
    assert alone.set_index("story_id").loc["m1-1", "reason"] == "149 tokens (< 150)"


def test_left_out_stories_are_scored_not_tested_and_not_in_the_pool() -> None:
    table = association_corpus()
    sea = [("boat", 0), ("wave", 4), ("sail", 8), ("fish", 12), ("tide", 16)]
    target = lemma_table({"kept": sea, "short": [("cloud", 0), ("wind", 4), ("storm", 8)]})
    target["n_words"] = [200, 40]
    exclusions = length_filter.short_sets(target, 150)
    out = th.assess(
        target, exclusions, table, top_pairs=100, weighting="stories", alpha=0.1, seed=0
    ).set_index("story_id")
    assert not out.loc["short", "included"] and np.isnan(out.loc["short", "p_value"])
    assert out.loc["short", "reason"] == "left out: 40 tokens (< 150)"
    assert out.loc["short", "n_pairs"] == 3  # still scored
    # the pool holds only the kept story's words: its random story is the story itself
    assert out.loc["kept", "included"] and out.loc["kept", "p_value"] > 0.4
    summary = th.group_table(out.reset_index()).iloc[0]
    assert (summary["n_stories"], summary["n_excluded"], summary["n_tested"]) == (2, 1, 1)
    assert summary["median_lemmas"] == 5  # over included stories only


def test_cross_fitting_scores_no_story_against_its_own_pairs() -> None:
    # 40 stories; the pair (rare, odd) is only ever in story s0; rare is in 10 stories, odd in 11
    stories = {f"s{k}": [("sun", 0), ("rain", 5), (f"w{k % 8}", 10)] for k in range(40)}
    stories["s0"] += [("rare", 20), ("odd", 30)]
    for k in range(1, 10):
        stories[f"s{k}"] += [("rare", 20)]
        stories[f"s{9 + k}"] += [("odd", 20)]
    stories["s19"] += [("odd", 20)]
    lemmas = lemma_table(stories)
    folds = th.fold_of(lemmas["story_id"], 2, seed=4)
    assert set(folds) == {0, 1}
    # a story's fold depends only on its id and the seed
    assert th.fold_of(pd.Series(["s0"]), 2, seed=4)[0] == folds[0]
    kwargs = dict(top_pairs=100, weighting="stories", alpha=0.1, seed=4, min_stories=1)
    crossed = th.assess_cross_fitted(
        lemmas, NO_EXCLUSIONS, None, folds=2, max_tokens=150, reference_max_tokens=150, **kwargs
    )
    assert list(crossed["story_id"]) == list(lemmas["story_id"])
    assert (crossed["fold"].to_numpy() == folds).all()
    ids = crossed.set_index("story_id")
    # against the table of the whole corpus, s0's (rare, odd) pair is seen; cross-fitted, not
    full = ns.count_pairs(lemmas, min_stories=1)
    own = assess(lemmas, full, seed=4)
    assert own.set_index("story_id").loc["s0", "seen_share"] == 1.0
    assert ids.loc["s0", "seen_share"] < 1.0


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
    # prompts 0-24: prompt 4's Llama-7b story has 94 tokens, so its 7 stories are left out
    assert (hanna["n_excluded"] == 1).all() and (hanna["n_tested"] == 24).all()
    assert hanna["share_exceeding"].between(0, 1).all()
    scores = pd.read_parquet(run / "results/hanna/narrative_sense/story_scores.parquet")
    assert (scores["n_words"] <= 150).all()
    assert (scores["n_pairs"] == scores["n_lemmas"] * (scores["n_lemmas"] - 1) // 2).all()
    # the short-set filter: every story of a prompt with a story under 150 tokens, listed
    lemmas = pd.read_parquet(run / "results/narrative_sense/lemmas/hanna.parquet")
    short = set(lemmas.loc[lemmas["n_words"] < 150, "prompt_id"].astype(str))
    excluded = pd.read_csv(
        run / "results/hanna/narrative_sense/tables/excluded_stories.csv", dtype={"set_id": str}
    )
    in_short = lemmas["prompt_id"].astype(str).isin(short)
    assert short and set(excluded["story_id"]) == set(lemmas.loc[in_short, "story_id"])
    assert excluded["reason"].str.startswith("prompt set ").all()
    left_out = scores.set_index("story_id").loc[list(excluded["story_id"])]
    assert not left_out["included"].any() and left_out["p_value"].isna().all()
    # HIPPOCORPUS is a reference and a target: cross-fitted in the schema's 2 folds
    hippo_scores = pd.read_parquet(run / "results/hippocorpus/narrative_sense/story_scores.parquet")
    assert set(hippo_scores["fold"]) == {0, 1}
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
