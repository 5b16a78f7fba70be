"""The plot-hole detectors' validity check (issue 24) and the window sized to the story
(issue 21): the validation pool, the checks on known pairs, stories left out for length (never
a silent "no"), the human-vs-LLM rates with bounded intervals and the verdicts, the figures."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import BARE_CONFIG, defaults, schema_defaults, validity_check
from test_plot_holes import STORY, FakeModel

from storyflow import plan, tables, validity
from storyflow.measures.plot_holes import detect, nli, scoring, validation
from storyflow.measures.plot_holes.verdict import label, verdict_of
from storyflow.tables.plot_holes import ALL_LLMS


def detector(**changes: object) -> detect.DetectorSettings:
    """Detector settings from ``plot_holes.detection`` and ``.prompts`` at the schema's defaults
    (format closed), ``changes`` applied to either."""
    detection, prompts = defaults("plot_holes", "detection"), defaults("plot_holes", "prompts")
    for key, value in changes.items():
        (detection if key in detection else prompts)[key] = value
    return detect.DetectorSettings.from_config({"detection": detection, "prompts": prompts})


SETTINGS = detector(classify="Q {story}", localize="L {story} {format}")


def version(
    story: str, v: str, sentences: list[str], maker: str = "controlled"
) -> dict[str, object]:
    """The PLOT_HOLE_STORIES row of version ``v`` of ``story`` (F: line 6 contradicts line 1)."""
    flawed = v == "F"
    return tables.PLOT_HOLE_STORIES.row(
        story_id=story, item_id=f"{story}:{maker}:{v}", maker=maker, version=v, has_error=flawed,
        n_sentences=len(sentences), sentences=sentences, error_lines=[6] if flawed else [],
        contr_lines=[1] if flawed else [], target_idx=5 if flawed else -1,
        attribute_class="colour", proposition="", original=" ".join(sentences),
        verification="exact", provenance="{}",
    )  # fmt: skip


def answer(
    sid: str, v: str, p_error: float, *, says: bool, status: str, ceeval: int, maker: str
) -> dict[str, object]:
    """Detector ``m``'s PLOT_HOLE_ANSWERS row on version ``v`` of story ``sid`` (no lines
    predicted, 10 prompt tokens)."""
    return tables.PLOT_HOLE_ANSWERS.row(
        item_id=f"{sid}:{maker}:{v}", story_id=sid, maker=maker, version=v, detector="m",
        has_error=v == "F", p_error=p_error, says_error=says, answer="", answer_status=status,
        pred_error=[], pred_contr=[], ceeval=ceeval, n_prompt_tokens=10,
    )  # fmt: skip


def flawed(sentences: list[str]) -> list[str]:
    return [*sentences[:5], sentences[5].replace("red", "blue"), *sentences[6:]]


def scores_by_detector(answers: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """The PLOT_HOLE_SCORES rows, by detector, of ``answers`` (by item_id) on the controlled
    ``items`` of corpus t: 95 % intervals of 500 resamples, unparseable answers scored wrong."""
    return scoring.scores_table(
        answers.reset_index(),
        items.assign(maker="controlled"),
        "t",
        confidence=0.95,
        resamples=500,
        seed=1,
        unparseable="wrong",
    ).set_index("detector")


# --- stories too long for the window: left out, listed, never a "no" --------------------------
def test_a_version_beyond_the_window_is_left_out_with_its_twin_and_listed() -> None:
    long = [*STORY[:6], " ".join(["and then we walked on"] * 60) + "."]
    items = tables.PLOT_HOLE_STORIES.frame(
        [
            version("short", "O", STORY),
            version("short", "F", flawed(STORY)),
            version("long", "O", long),
            version("long", "F", flawed(long)),
        ]
    )
    model = FakeModel(lambda prompt, names: [0.2, 0.8], trained=200)
    answers = detect.detect(model, items, SETTINGS).set_index("item_id")
    assert model.n_ctx <= 200 and model.n_ctx % 64 == 0  # the window: the longest that fits
    assert answers.loc["long:controlled:O", "answer_status"] == detect.TOO_LONG
    assert math.isnan(answers.loc["long:controlled:F", "p_error"])
    assert answers.loc["short:controlled:O", "answer_status"] == "not_asked"
    row = scores_by_detector(answers, items).loc["fake"]
    # before: the long story counted as a "no" (a right answer on its original)
    assert (row["n"], row["n_left_out"], row["specificity"]) == (2, 2, 1.0)
    left = scoring.left_out_table(answers.reset_index(), "t")
    assert sorted(left["item_id"]) == ["long:controlled:F", "long:controlled:O"]
    assert (left["n_prompt_tokens"] > 200).all() and left["reason"].str.contains("window").all()


def test_a_served_model_without_a_known_window_is_asked_everything() -> None:
    long = [*STORY[:6], " ".join(["and then we walked on"] * 60) + "."]
    items = tables.PLOT_HOLE_STORIES.frame([version("long", "O", long)])
    model = FakeModel(lambda prompt, names: [0.3, 0.7], trained=None, served=True)
    answers = detect.detect(model, items, SETTINGS)
    assert answers["p_error"].tolist() == [0.3] and model.window is None


def test_a_configured_window_is_a_fixed_limit() -> None:
    items = tables.PLOT_HOLE_STORIES.frame([version("s", "O", STORY)])
    model = FakeModel(lambda prompt, names: [0.3, 0.7], trained=4096)
    fixed = detector(classify="Q {story}", localize="L {story}", n_ctx=256)
    tight = detector(classify="Q {story}", localize="L {story}", n_ctx=60)
    assert detect.detect(model, items, fixed)["answer_status"].tolist() == ["not_asked"]
    assert detect.detect(model, items, tight)["answer_status"].tolist() == [detect.TOO_LONG]


# --- the paper's answer format: tagged answer, quoted lines matched to the sentences ---------
def tagged(error: str, contradicted: str, decision: str) -> str:
    """An answer in the paper's format (flawed_fictions.txt l. 1591-1611)."""
    return (
        f"<response>\n<explanation>\nThe car changes colour.\n</explanation>\n\n<error_lines>\n"
        f"{error}\n</error_lines>\n\n<contradicted_lines>\n{contradicted}\n"
        f"</contradicted_lines>\n\n<decision>\n{decision}\n</decision>\n</response>"
    )


YES = "There is a continuity error: the car is blue in the end and red at the start."


def test_the_paper_format_reads_the_decision_and_matches_the_quoted_lines() -> None:
    """format paper (FlawedFictions): the story is shown as plain text, the model quotes lines;
    the quotes are matched to sentences and CEEval-Full asks that each set holds a true line
    (before: numbered lines and an 'error: 6; contradicts: 1' line, not the paper's answer)."""
    f = flawed(STORY)  # gold: error line 6, contradicted line 1
    replies = {
        # right: whole sentences quoted, with list marks and curly quotes
        "a": tagged(f"- “{f[5]}”", f'"{STORY[0]}"', YES),
        # right: a partial quote of the error line and two contradicted lines on one line
        "b": tagged("parked the blue car near the road", f'"{STORY[0]}" and "{STORY[1]}"', YES),
        # a yes with the wrong lines: read, scored 0
        "c": tagged(f"{STORY[2]}", f"{STORY[1]}", YES),
        # quotes that are not in the story: unmatched, scored 0
        "d": tagged("The dragon slept for a year.", f"{STORY[0]}", YES),
        # a yes with no contradicted lines: unparseable, scored 0
        "e": tagged(f"{f[5]}", "NA", YES),
        # no decision at all: no verdict (p_error 0.5), scored 0
        "g": "I am not sure what to say.",
    }
    endings = {k: f"It rained {k}." for k in replies}
    items = tables.PLOT_HOLE_STORIES.frame(
        [version(k, "F", [*f[:-1], endings[k]]) for k in replies] + [version("o", "O", STORY)]
    )
    seeds = []

    def sample(prompt, k, settings):
        assert settings.max_tokens == 300 and settings.temperature == 0.5
        assert prompt.startswith("D <story>") and "\n1. " not in prompt  # plain, not numbered
        seeds.append(settings.seed)
        story = next((s for s, end in endings.items() if end in prompt), None)
        return [replies[story] if story else tagged("NA", "NA", "No continuity error found")]

    model = FakeModel(sample_fn=sample)
    settings = detector(
        format="paper", detect="D <story>{story}</story>", reasoning_tokens=300, temperature=0.5,
        seed=7,
    )  # fmt: skip
    assert settings.classify is None and settings.max_tokens is None  # the closed format's keys
    answers = detect.detect(model, items, settings).set_index("story_id")
    assert {kind for kind, *_ in model.prompts} == {"sample"}  # no closed choice asked
    assert len(set(seeds)) == len(seeds) == 7  # seeded per story text
    got = answers[["p_error", "answer_status", "ceeval"]].to_dict("index")
    lines = {k: (list(r.pred_error), list(r.pred_contr)) for k, r in answers.iterrows()}
    assert got["a"] == {"p_error": 1.0, "answer_status": "ok", "ceeval": 1}
    assert lines["a"] == ([6], [1])
    assert got["b"] == {"p_error": 1.0, "answer_status": "ok", "ceeval": 1}
    assert lines["b"] == ([6], [1, 2])
    assert got["c"] == {"p_error": 1.0, "answer_status": "ok", "ceeval": 0}
    assert lines["c"] == ([3], [2])
    assert got["d"] == {"p_error": 1.0, "answer_status": "unmatched", "ceeval": 0}
    assert got["e"] == {"p_error": 1.0, "answer_status": "unparseable", "ceeval": 0}
    assert got["g"] == {"p_error": 0.5, "answer_status": "unparseable", "ceeval": 0}
    assert got["o"] == {"p_error": 0.0, "answer_status": "not_asked", "ceeval": 1}
    # the unmatched quote counts as unparseable in the scores (n_unparseable) and under the
    # exclude policy leaves with its story
    assert scores_by_detector(answers, items).loc["fake", "n_unparseable"] == 3


def test_the_paper_decision_reads_the_paper_sentences() -> None:
    from storyflow.measures.plot_holes import ceeval

    # the decision the schema's default prompts.detect asks for, and the paper's (Figure 12)
    assert ceeval.paper_decision(tagged("x", "y", "There is no continuity error.")) == "no"
    assert ceeval.paper_decision(tagged("x", "y", "No continuity error found")) == "no"
    assert ceeval.paper_decision(tagged("x", "y", "The story has no continuity errors.")) == "no"
    assert ceeval.paper_decision(tagged("x", "y", YES)) == "yes"
    # no decision tag: the decision sentence anywhere, else no verdict
    assert ceeval.paper_decision("There is no continuity error.") == "no"
    assert ceeval.paper_decision('Hence my answer is "No continuity error found"') == "no"
    assert ceeval.paper_decision("The lines are inconsistent.") is None


def test_the_default_detect_prompt_asks_for_what_the_paper_format_reads() -> None:
    """The schema's prompts.detect (storyflow's wording of the paper's Figure 12): the story in
    <story> tags, the answer's five tags, a "no" decision sentence paper_decision reads as no;
    an answer that only echoes the template quotes no line (its placeholders are dropped)."""
    from storyflow.measures.plot_holes import ceeval

    prompt = defaults("plot_holes", "prompts")["detect"]
    assert "<story>\n{story}\n</story>" in prompt
    for tag in ("response", "explanation", "error_lines", "contradicted_lines", "decision"):
        assert prompt.count(f"<{tag}>") == prompt.count(f"</{tag}>") == 1, tag
    no = prompt.split('write "')[-1].split('"')[0]
    assert no == "There is no continuity error."
    assert ceeval.paper_decision(tagged("NA", "NA", no)) == "no"
    echoed = prompt[prompt.index("<response>") :]
    verdict, found = ceeval.paper_answer(echoed, STORY)
    assert verdict == "no" and not found.ok  # the template's own decision line says no


def test_the_detector_params_hold_only_the_keys_of_the_configured_format() -> None:
    from storyflow import plan

    config = {
        "plot_holes": {
            "seed": 11,
            "prompts": {"classify": "C", "localize": "L", "detect": "D"},
            "detection": {"format": "closed", "threshold": 0.5, "max_tokens": 24,
                          "reasoning_tokens": 512, "temperature": 0.5, "n_ctx": None,
                          "surprisal_z": 2.0},
        }
    }  # fmt: skip
    closed = plan.plot_holes.detector_settings(config)
    assert set(closed["prompts"]) == {"classify", "localize"}
    assert not {"reasoning_tokens", "surprisal_z", "temperature", "seed"} & set(closed["detection"])
    config["plot_holes"]["detection"]["format"] = "paper"
    paper = plan.plot_holes.detector_settings(config)
    assert set(paper["prompts"]) == {"detect"} and paper["detection"]["reasoning_tokens"] == 512
    assert (paper["detection"]["temperature"], paper["detection"]["seed"]) == (0.5, 11)
    assert detect.DetectorSettings.from_config(paper).detect == "D"


# --- the NLI baseline over every ordered pair -------------------------------------------------
def test_nli_over_every_ordered_pair_localizes_the_later_sentence_as_the_error() -> None:
    story = flawed(STORY)

    def answer(prompt, names):
        hit = prompt.startswith(f"A: {story[5]}") and prompt.endswith(f"B: {story[0]}")
        return [0.9, 0.1] if hit else [0.1, 0.9]

    model = FakeModel(answer)
    settings = nli.NliSettings.from_config(
        {
            "nli": defaults(
                "plot_holes", "nli", prompt="A: {premise} B: {hypothesis}", pairs="all"
            ),
            "min_sentences": defaults("plot_holes")["min_sentences"],
        }
    )
    items = tables.PLOT_HOLE_STORIES.frame([version("s", "F", story)])
    row = nli.nli_answers(model, items, settings).iloc[0]
    assert len(model.prompts) == 7 * 6  # every ordered pair, asked once
    # the hit pair has the later sentence (6) as premise: the error is still the later one
    assert (list(row["pred_error"]), list(row["pred_contr"]), row["ceeval"]) == ([6], [1], 1)


# --- the checks on known pairs -------------------------------------------------------------------
#: A config whose detector checks need only 10 pairs, with 95 % intervals of 500 resamples, seed 3.
SMALL_POOL = schema_defaults(
    {
        **BARE_CONFIG,
        "stats": {"resamples": 500, "seed": 3},
        "validity": {"detector": {"min_pairs": 10}},
    }
)
#: The detectors' checks as the plan sets them from :data:`SMALL_POOL`, at the schema's
#: thresholds (AUROC 0.5, CEEval gain 0), on the pairs of every attribute class (None: only a
#: caller asks for that).
CHECK = validation.CheckSettings.from_params(
    {**plan.plot_holes.settings(SMALL_POOL)["checks"], "classes": None}
)


def pairs(score_o, score_f, ceeval_o, ceeval_f) -> pd.DataFrame:
    n = len(score_o)
    return pd.DataFrame(
        {"source": "v", "story_id": [f"s{i}" for i in range(n)], "score_O": score_o,
         "score_F": score_f, "ceeval_O": ceeval_o, "ceeval_F": ceeval_f}
    )  # fmt: skip


def by_check(rows: list[dict[str, object]]) -> pd.DataFrame:
    return validity.frame(rows).set_index("check")


def test_a_detector_that_separates_flawed_from_original_passes() -> None:
    rng = np.random.default_rng(0)
    good = pairs(rng.uniform(0, 0.4, 30), rng.uniform(0.6, 1, 30), [1] * 30, [1] * 20 + [0] * 10)
    checks = by_check(validation.role_checks(good, "detector", "m", CHECK, "test"))
    assert checks.loc["auroc", "value"] == 1.0 and checks.loc["auroc", "passed"]
    assert checks.loc["ceeval_minus_always_no", "value"] == pytest.approx(20 / 30 / 2)
    assert checks.loc["ceeval_minus_always_no", "ci_low"] > 0
    assert checks["passed"].all() and (checks["n"] == 30).all()


def test_a_detector_that_says_yes_to_everything_fails() -> None:
    # the case: every original and every flawed version called flawed, P(yes) ≈ 0.99
    rng = np.random.default_rng(1)
    yes = pairs(0.99 + rng.uniform(0, 0.005, 60), 0.99 + rng.uniform(0, 0.005, 60), [0] * 60,
                [1] * 12 + [0] * 48)  # fmt: skip
    checks = by_check(validation.role_checks(yes, "detector", "m", CHECK, "test"))
    assert 0.3 < checks.loc["auroc", "value"] < 0.7 and not checks.loc["auroc", "passed"]
    assert 0 <= checks.loc["auroc", "ci_low"] <= checks.loc["auroc", "ci_high"] <= 1
    gain = checks.loc["ceeval_minus_always_no"]
    assert gain["value"] == pytest.approx(12 / 60 / 2 - 0.5) and not gain["passed"]
    assert checks.loc["pairs", "passed"]


def test_too_few_pairs_fail_the_pairs_check() -> None:
    few = pairs([0.1] * 8, [0.9] * 8, [1] * 8, [1] * 8)
    checks = by_check(validation.role_checks(few, "nli", "m", CHECK, "test"))
    assert checks.loc["auroc", "passed"] and not checks.loc["pairs", "passed"]
    assert checks.loc["pairs", "value"] == 8 and checks.loc["pairs", "threshold"] == 10


def answers_file(path, story_ids, p_o, p_f, *, status_f="not_asked", ceeval_f=0) -> str:
    rows = []
    for sid, po, pf in zip(story_ids, p_o, p_f, strict=True):
        for v, p in (("O", po), ("F", pf)):
            status = status_f if v == "F" else "not_asked"
            rows.append(
                answer(sid, v, p, says=p > 0.5, status=status, ceeval=1 if v == "O" else ceeval_f,
                       maker="controlled")
            )  # fmt: skip
    tables.PLOT_HOLE_ANSWERS.frame(rows).to_parquet(path)
    return str(path)


def test_the_check_pools_every_source_and_skips_pairs_left_out(tmp_path) -> None:
    ids_a, ids_b = [f"a{i}" for i in range(6)], [f"b{i}" for i in range(5)]
    made_a = tables.PLOT_HOLE_STORIES.frame(
        [version(s, v, STORY) for s in ids_a for v in ("O", "F")]
    )
    made_b = tables.PLOT_HOLE_STORIES.frame(
        [version(s, v, STORY) for s in ids_b for v in ("O", "F", "C")]
    )
    file_a = answers_file(tmp_path / "a.parquet", ids_a, [0.1] * 6, [0.9] * 6, ceeval_f=1)
    file_b = answers_file(tmp_path / "b.parquet", ids_b, [0.2] * 5, [0.8] * 4 + [math.nan],
                          ceeval_f=1)  # fmt: skip
    sources = [
        validation.Source("validation", made_a, {("detector", "m"): file_a}),
        validation.Source("hippocorpus", made_b, {("detector", "m"): file_b}),
    ]
    table = validation.check_detectors(sources, CHECK, surprisal_z=2.0).set_index("check")
    assert table.loc["pairs", "value"] == 10  # 6 + 5, one without a score
    assert "validation 6, hippocorpus 5" in table.loc["pairs", "detail"]
    assert "1 pair(s) without a score" in table.loc["pairs", "detail"]
    assert set(table["corpus"]) == {"all"} and set(table["role"]) == {"detector"}
    verdicts = verdict_of(table.reset_index())
    assert verdicts == {"m": (True, "")}
    other_classes = replace(CHECK, resamples=50, seed=2022, classes=("number",))
    assert validation.check_detectors(sources, other_classes, surprisal_z=2.0).empty
    assert label("m", verdicts) == (True, "passed")
    assert label("baseline:always-no", verdicts)[0] is None
    assert label("nli:m", verdicts) == (None, "not checked (no controlled pairs)")


def test_the_surprisal_role_is_checked_on_its_own_statistic(tmp_path) -> None:
    ids = [f"s{i}" for i in range(12)]
    made = tables.PLOT_HOLE_STORIES.frame([version(s, v, STORY) for s in ids for v in ("O", "F")])
    rows = []
    for sid in ids:
        for v in ("O", "F"):
            nll = [2.0, 2.1, 1.9, 2.0, 2.05, 6.0 if v == "F" else 2.2, 1.95]
            rows += [
                tables.PLOT_HOLE_SURPRISAL.row(
                    item_id=f"{sid}:controlled:{v}", story_id=sid, version=v, model="m",
                    sentence_idx=i, n_tokens=5, nll=x,
                )
                for i, x in enumerate(nll)
            ]  # fmt: skip
    path = tmp_path / "nll.parquet"
    tables.PLOT_HOLE_SURPRISAL.frame(rows).to_parquet(path)
    source = validation.Source("validation", made, {("surprisal", "m"): str(path)})
    table = validation.check_detectors([source], CHECK, surprisal_z=2.0).set_index("check")
    assert table.loc["auroc", "value"] == 1.0 and table.loc["auroc", "role"] == "surprisal"
    # F: the changed sentence (6) stands out and its most similar earlier sentence is line 1
    assert table.loc["ceeval_minus_always_no", "value"] == pytest.approx(0.5)


# --- the validation pool ---------------------------------------------------------------------
def test_the_validation_pool_leaves_out_the_sample_and_long_stories(nlp) -> None:
    from storyflow.sentences import load_spacy

    tagger = load_spacy("en_core_web_sm", exclude=("lemmatizer",))
    text = " ".join(STORY)
    corpus = pd.DataFrame(
        {
            "story_id": [f"h{i}" for i in range(8)],
            "text": [text.replace("sister", w) for w in
                     ("sister", "mother", "aunt", "wife", "sister", "daughter", "niece", "sister")],
        }
    )  # fmt: skip
    corpus.loc[7, "text"] = text + " " + " ".join(["More words here."] * 30)  # too long
    kwargs = {"pairs": 3, "max_words": 80, "seed": 4, "min_sentences": 6}
    made, coverage, _ = validation.validation_pool(corpus, ["h0", "h1"], nlp, tagger, **kwargs)
    ids = list(dict.fromkeys(made["story_id"]))
    assert len(ids) == 3 and not {"h0", "h1", "h7"} & set(ids)
    assert set(made["version"]) == {"O", "F"} and made["has_error"].sum() == 3
    again, _, _ = validation.validation_pool(corpus, ["h0", "h1"], nlp, tagger, **kwargs)
    pd.testing.assert_frame_equal(made, again)
    other, _, _ = validation.validation_pool(
        corpus, ["h0", "h1"], nlp, tagger, **{**kwargs, "seed": 5}
    )
    assert list(dict.fromkeys(other["story_id"])) != ids  # another order
    any_row = coverage.set_index("attribute_class").loc["any"]
    assert any_row["n_with_candidate"] >= 3 and any_row["n_stories"] <= 5
    colours, _, _ = validation.validation_pool(
        corpus, ["h0", "h1"], nlp, tagger, **kwargs, classes=["colour"]
    )
    f = colours[colours["version"] == "F"]
    assert len(f) == 3 and set(f["attribute_class"]) == {"colour"}  # not the kin terms


# --- HANNA human-vs-LLM rates ------------------------------------------------------------------
def hanna(n_prompts: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    stories, rows = [], []
    for p in range(n_prompts):
        for group, says in (("Human", p % 3 == 0), ("GPT", p % 2 == 0)):
            sid = f"{group}{p}"
            stories.append({"story_id": sid, "story_type": group, "prompt_id": f"p{p}"})
            rows.append(
                answer(sid, "O", 0.9 if says else 0.1, says=says, status="not_asked", ceeval=1,
                       maker="original")
            )  # fmt: skip
    return tables.PLOT_HOLE_ANSWERS.frame(rows), pd.DataFrame(stories)


def test_human_vs_llm_rates_stay_in_range_and_carry_the_verdict() -> None:
    answers, stories = hanna(12)
    kwargs = {"human": "Human", "confidence": 0.95, "resamples": 500, "seed": 1}
    verdicts = {"m": (False, "auroc")}
    row = scoring.human_vs_llm(
        answers, stories, min_group_size=5, verdicts=verdicts, best=None, **kwargs
    ).iloc[0]
    assert (row["n_prompts"], row["rate_human"], row["rate_llm"]) == (12, 4 / 12, 6 / 12)
    assert 0 <= row["rate_human_ci_low"] < 4 / 12 < row["rate_human_ci_high"] <= 1
    low, high = validity.wilson_interval(6, 12, 0.95)
    assert (row["rate_llm_ci_low"], row["rate_llm_ci_high"]) == (low, high)
    assert -1 <= row["ci_low"] <= row["difference"] <= row["ci_high"] <= 1
    assert (row["valid"], row["validity"], row["small_group"]) == (False, "failed: auroc", False)
    # one LLM: its pooled row is the same contrast
    rates = scoring.human_vs_llm(answers, stories, min_group_size=5, verdicts=verdicts,
                                 best=None, **kwargs).set_index("group")  # fmt: skip
    pooled = rates.loc[ALL_LLMS]
    for column in ("n_prompts", "rate_llm", "rate_llm_ci_low", "difference", "ci_low", "ci_high"):
        assert pooled[column] == rates.loc["GPT", column]
    small = scoring.human_vs_llm(
        *hanna(4), min_group_size=5, verdicts=verdicts, best=None, **kwargs
    ).iloc[0]
    assert small["small_group"] and small["n_prompts"] == 4
    # the difference is a contrast of 4 prompts: not tested; each share keeps its Wilson interval
    assert np.isnan([small["ci_low"], small["ci_high"]]).all()
    for side in ("human", "llm"):
        low, high = small[f"rate_{side}_ci_low"], small[f"rate_{side}_ci_high"]
        assert 0 <= low <= small[f"rate_{side}"] <= high <= 1


def test_the_pooled_row_sets_each_prompts_llm_mean_against_its_human_story() -> None:
    says = {  # prompt by prompt: does the detector call the story flawed?
        "Human": [False, False, True, False, False, False],
        "A": [True, True, True, False, True, False],
        "B": [True, False, False, False, True, True],
    }
    stories, rows = [], []
    for group, verdicts in says.items():
        for p, flawed in enumerate(verdicts):
            sid = f"{group}{p}"
            stories.append({"story_id": sid, "story_type": group, "prompt_id": f"p{p}"})
            rows.append(
                answer(sid, "O", 0.9 if flawed else 0.1, says=flawed, status="not_asked",
                       ceeval=1, maker="original")
            )  # fmt: skip
    rates = scoring.human_vs_llm(
        tables.PLOT_HOLE_ANSWERS.frame(rows),
        pd.DataFrame(stories),
        human="Human", confidence=0.95, resamples=500, seed=1, min_group_size=5,
        verdicts={"m": (True, "passed")}, best="m",
    ).set_index("group")  # fmt: skip
    assert list(rates.index) == ["A", "B", ALL_LLMS]
    pooled = rates.loc[ALL_LLMS]
    # per prompt (A + B) / 2 - human: 1, .5, -.5, 0, 1, .5
    assert pooled["difference"] == pytest.approx(2.5 / 6)
    assert (pooled["n_prompts"], pooled["rate_human"]) == (6, 1 / 6)
    assert pooled["rate_llm"] == pytest.approx(3.5 / 6)
    # the LLM share's interval counts the 12 LLM stories, 7 of them called flawed
    assert (pooled["rate_llm_ci_low"], pooled["rate_llm_ci_high"]) == validity.wilson_interval(
        7, 12, 0.95
    )
    assert pooled["ci_low"] < pooled["difference"] < pooled["ci_high"]


def test_best_is_the_valid_detector_with_the_largest_gain() -> None:
    rows = []
    for model, auroc_low, gain in (("a", 0.6, 0.1), ("b", 0.7, 0.2), ("c", 0.4, 0.3)):
        detector = {"measure": "plot_holes", "corpus": "all", "role": "detector", "model": model,
                    "rule": "ci_low > threshold", "n": 60}  # fmt: skip
        rows += [
            validity_check(**detector, name="auroc", value=0.8, ci=(auroc_low, 0.9), threshold=0.5),
            validity_check(**detector, name="ceeval_minus_always_no", value=gain, ci=(0.05, 0.4),
                           threshold=0.0),
        ]  # fmt: skip
    table = validity.frame(rows)
    assert scoring.best_detector(table) == "b"  # c has the largest gain but failed
    assert scoring.best_detector(table[table["model"] == "c"]) is None


# --- figures ---------------------------------------------------------------------------------
def test_failed_detectors_are_drawn_hollow_with_their_interval(tmp_path) -> None:
    from storyflow.figures.plot_holes import length_bins, plot_ceeval

    base = {"corpus": "t", "maker": "controlled", "n": 20, "ceeval_ci_low": 0.3,
            "ceeval_ci_high": 0.7, "ceeval_full": 0.5}  # fmt: skip
    scores = pd.DataFrame(
        [
            {**base, "detector": "good", "kind": "model", "valid": True, "validity": "passed"},
            {**base, "detector": "bad", "kind": "model", "valid": False,
             "validity": "failed: auroc, pairs"},
            {**base, "detector": "baseline:always-no", "kind": "baseline", "valid": None,
             "validity": "not checked"},
        ]
    )  # fmt: skip
    fig = plot_ceeval(scores, [tmp_path / "c.png"], 50)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    bars = dict(zip(labels, ax.patches, strict=True))
    assert bars["bad (failed: auroc, pairs)"].get_facecolor()[3] == 0  # hollow
    assert bars["good"].get_facecolor()[3] == 1
    assert len(ax.lines) >= 3  # an error bar per detector (and the 0.5 line)
    assert any("failed its validity check" in t.get_text() for t in fig.legends[0].get_texts())
    answers = tables.PLOT_HOLE_ANSWERS.frame(
        answer(f"s{i}", v, 0.5, says=True, status="ok", ceeval=int(i % 2 == 0), maker="controlled")
        for i in range(12)
        for v in ("O", "F")
    )
    lengths = [" ".join(["w"] * (50 + 10 * i)) for i in range(12)]
    made = pd.DataFrame({"story_id": [f"s{i}" for i in range(12)], "original": lengths})
    bins = length_bins(answers, made, 0.95)
    assert len(bins) == 3 and (bins["n"] == 8).all()
    assert ((bins["ci_low"] <= bins["ceeval"]) & (bins["ceeval"] <= bins["ci_high"])).all()
    assert bins["ci_low"].ge(0).all() and bins["ci_high"].le(1).all()
