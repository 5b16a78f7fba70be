"""The tension measure (ending forecasting): cuts, no-rates, curve statistics, the judges and
the forecaster (docs/tension.md)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps
from conftest import BARE_CONFIG, defaults, schema_defaults

from storyflow import bootstrap, plan, tables, validity
from storyflow.bootstrap import Statistics
from storyflow.errors import StoryflowError
from storyflow.measures.tension import calibration, compare, curves, cuts, forecast, judges
from storyflow.measures.tension import validity as tension_validity
from storyflow.measures.tension import verdict as tension_verdict

REPO = Path(__file__).resolve().parents[1]
WORDS10 = "one two three four five six seven eight nine ten"


def cut_columns(
    story_id: str, story_type: str, model: str, *, cut: int, sentence_idx: int, pct: float
) -> dict[str, object]:
    """The columns every table of cuts starts with, by name."""
    return {
        "story_id": story_id,
        "story_type": story_type,
        "model": model,
        "cut": cut,
        "sentence_idx": sentence_idx,
        "pct": pct,
    }


def cut_settings(**changes: object) -> cuts.CutSettings:
    """``tension.cuts`` with the schema's defaults, ``changes`` applied."""
    return cuts.CutSettings.from_config(defaults("tension", "cuts", **changes))


def curve_settings(**changes: object) -> curves.CurveSettings:
    """``tension.curves`` with the schema's defaults, ``changes`` applied."""
    return curves.CurveSettings.from_config(defaults("tension", "curves", **changes))


def intervals(**changes: object) -> Statistics:
    """The tension intervals the plan passes, at the schema's defaults, ``changes`` applied."""
    return Statistics.from_params(
        {k: defaults("stats")[k] for k in ("confidence", "resamples", "seed", "min_group_size")}
        | changes
    )


def test_cuts_keep_pct_window_and_the_papers_minimum_context() -> None:
    """Sui et al.: position i (the prefix s1..si) is skipped when the *preceding* sentence
    s(i-1) has fewer than 10 words; the old rule looked at si itself."""
    sentences = [WORDS10 + ".", "Short one.", WORDS10 + " more.", WORDS10 + ".", "End."]
    n_tokens = [10, 2, 11, 10, 67]  # 100 tokens
    kept, reason = cuts.story_cuts(sentences, n_tokens, cut_settings())
    assert reason is None
    # after s0: no preceding sentence; after s1 (pct 0.12): s0 has 10 words (kept); after s2
    # (0.23): s1 is short; after s3 (0.33): s2 has 11 words (kept); s4 is the last sentence
    assert kept == [(1, 0.12, 12), (3, 0.33, 33)]
    narrow = cut_settings(min_pct=0.1, max_pct=0.2)
    assert cuts.story_cuts(sentences, n_tokens, narrow)[0] == [(1, 0.12, 12)]
    only_short = cut_settings(min_pct=0.2, max_pct=0.3)  # after s2, preceded by "Short one."
    assert cuts.story_cuts(sentences, n_tokens, only_short)[0] == []
    # min_words 0 switches the rule off: the first position is kept too
    every = cuts.story_cuts(sentences, n_tokens, cut_settings(min_words=0))[0]
    assert [i for i, _, _ in every] == [0, 1, 2, 3]


def test_the_paper_config_keeps_positions_with_10_to_99_percent_of_the_tokens() -> None:
    """Sui et al. Eq. 7: P = {i: 10% <= pct(i) <= 99%}. config/paper.yaml's tension.cuts (over
    the schema's defaults) keeps exactly those positions that have their minimum context, every
    one of them; the window it had before (0-1) also kept 5%, 99.5% and 99.9%."""
    import yaml

    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())["tension"]["cuts"]
    settings = cut_settings(**paper)
    assert (settings.min_pct, settings.max_pct, settings.max_cuts) == (0.10, 0.99, None)
    sentences = [WORDS10 + "."] * 6
    n_tokens = [20, 30, 900, 45, 4, 1]  # 1,000 tokens: pct .02 .05 .95 .995 .999 (1.0)
    kept, _ = cuts.story_cuts(sentences, n_tokens, settings)
    # position 1 has no preceding sentence; .05 is under 10 %, .995 and .999 over 99 %
    assert kept == [(2, 0.95, 950)]
    whole, _ = cuts.story_cuts(
        sentences, n_tokens, cut_settings(**{**paper, "min_pct": 0.0, "max_pct": 1.0})
    )
    assert [pct for _, pct, _ in whole] == [0.05, 0.95, 0.995, 0.999]
    # the bounds are inclusive: exactly 10 % and 99 % revealed are kept
    edge, _ = cuts.story_cuts(sentences, [50, 50, 890, 9, 1, 0], settings)
    assert [pct for _, pct, _ in edge] == pytest.approx([0.10, 0.99])


def test_cuts_cap_is_evenly_spaced() -> None:
    assert cuts.evenly_spaced(10, 3) == [0, 4, 9]  # round(4.5) = 4 (to even)
    assert cuts.evenly_spaced(3, 5) == [0, 1, 2]
    assert cuts.evenly_spaced(7, 1) == [6]


@pytest.mark.parametrize(
    ("sentences", "reason"),
    [
        ([], "empty story"),
        ([WORDS10], "one sentence"),
        (["Hi.", "Bye."], "no cut"),
        ([WORDS10] * 600, "over tension.cuts.max_story_words"),
    ],
)
def test_bad_stories_are_excluded_with_a_reason(sentences, reason) -> None:
    kept, why = cuts.story_cuts(sentences, [5] * len(sentences), cut_settings())
    assert kept == [] and reason in why


def test_plan_cuts_lists_excluded_stories_and_the_unit() -> None:
    stories = pd.DataFrame({"story_id": ["a", "b"], "story_type": ["x", "y"], "text": ["", ""]})
    sentences = pd.DataFrame(
        {
            "story_id": ["a", "a", "a", "b"],
            "sentence_idx": [0, 1, 2, 0],
            "text": [WORDS10, WORDS10, WORDS10, "Hi."],
        }
    )
    planned, excluded = cuts.plan_cuts(
        stories, sentences, lambda text: len(text.split()), cut_settings(), "m", "words"
    )
    # after s0: no preceding sentence; after s1: 20 of 30 words, preceded by 10 words
    assert planned[["story_id", "sentence_idx"]].values.tolist() == [["a", 1]]
    assert planned.loc[0, "pct"] == pytest.approx(2 / 3) and planned.loc[0, "unit"] == "words"
    assert planned.loc[0, "remainder"] == WORDS10
    assert excluded["story_id"].tolist() == ["b"] and "one sentence" in excluded.loc[0, "reason"]


def judgments(matches: list[object], cut: int = 0) -> pd.DataFrame:
    n = len(matches)
    return tables.TENSION_JUDGMENTS.frame(
        pd.DataFrame(
            {"story_id": "s", "story_type": "t", "model": "m", "cut": cut, "sentence_idx": cut,
             "pct": 0.5, "sample": range(n), "judge": "j", "score": np.nan, "mass": np.nan,
             "match": pd.array(matches, dtype="boolean"), "status": "judged"}
        )
    )  # fmt: skip


def test_no_rate_divides_by_k_and_counts_an_ending_without_a_verdict_as_a_miss() -> None:
    """Sui et al. Eq. 4: no-rate = 1 - (1/K) sum_k j_k with j = 1 only for a match, so the
    denominator is every sampled ending and an ending with no verdict (j = 0) is a miss; the
    judged-only share, storyflow's old no-rate, is its own column."""
    rates = curves.cut_no_rates(judgments([True, False, False, None]))
    row = rates.iloc[0]
    assert (row.n_samples, row.n_judged, row.n_no, row.n_unjudged) == (4, 3, 2, 1)
    assert row.no_rate == pytest.approx(1 - 1 / 4)  # one match of K = 4 (was 2 / 3)
    assert row.no_rate_judged == pytest.approx(2 / 3)
    nothing = curves.cut_no_rates(judgments([None, None])).iloc[0]
    assert nothing.no_rate == 1.0 and math.isnan(nothing.no_rate_judged)
    # every ending judged: the two agree
    full = curves.cut_no_rates(judgments([True, False, True, True, False])).iloc[0]
    assert full.no_rate == full.no_rate_judged == pytest.approx(2 / 5)


def test_story_statistics_rest_on_the_papers_no_rate() -> None:
    """Three cuts whose no-rates differ between the two denominators: the story's no-rate, late
    no-rate and peaks are the paper's; no_rate_judged averages the judged-only shares."""
    verdicts = pd.concat(
        [
            judgments([True, None], cut=0),  # paper 0.5, judged-only 0.0
            judgments([False, True], cut=1),  # 0.5 and 0.5
            judgments([None, None], cut=2),  # 1.0 and NaN
            judgments([True, True], cut=3),  # 0.0 and 0.0
        ]
    )
    verdicts["pct"] = np.repeat([0.2, 0.5, 0.85, 0.95], 2)
    rates = curves.cut_no_rates(verdicts)
    assert rates["no_rate"].tolist() == [0.5, 0.5, 1.0, 0.0]
    story = curves.story_statistics(rates, curve_settings()).iloc[0]
    assert story["n_cuts"] == 4 and story["n_unjudged"] == 3
    assert story["no_rate"] == pytest.approx(2.0 / 4)  # judged-only curve: (0 + 0.5 + 0) / 3
    assert story["no_rate_judged"] == pytest.approx(0.5 / 3)
    assert story["late_no_rate"] == pytest.approx(0.5)  # cuts at 0.85 and 0.95: (1 + 0) / 2
    # cut 2 (1.0) is a peak above 0.5 and 0.0: (0 - 1) / 1 = -100 %
    assert story["post_spike_convergence"] == pytest.approx(-100.0)


def test_vertex_angle() -> None:
    assert curves.vertex_angle((0, 0), (0.5, 1), (1, 0)) == pytest.approx(53.130102, abs=1e-5)
    assert curves.vertex_angle((0, 0), (0.5, 0.5), (1, 1)) == pytest.approx(180)


def test_monotone_and_flat_curves_have_no_reversal() -> None:
    pct = np.linspace(0.1, 0.9, 8)
    assert curves.reversals(pct, np.linspace(0, 1, 8), 3) == []
    assert curves.reversals(pct, np.full(8, 0.5), 3) == []


def test_zigzag_reversals_are_counted() -> None:
    pct = np.linspace(0.1, 0.9, 7)
    zigzag = [0, 1, 0, 1, 0, 1, 0]
    # unsmoothed (width 1): every interior point reverses, all with sharp angles
    turns = curves.reversals(pct, zigzag, smoothing=1)
    assert [(first, last) for first, last, _ in turns] == [(j, j) for j in range(1, 6)]
    # on the unit square: neighbours 1/6 apart in x, 1 in y: angle 2·atan(1/6) = 18.9°
    assert all(angle == pytest.approx(2 * math.degrees(math.atan(1 / 6))) for *_, angle in turns)
    stats = curves.curve_statistics(pct, zigzag, curve_settings(smoothing=1))
    assert stats["inflection_rate_30"] == pytest.approx(5 / 7)
    # smoothed over 3 cuts: 1/2, 1/3, 2/3, 1/3, 2/3, 1/3, 1/2 reverses at positions 1..5
    assert [first for first, _, _ in curves.reversals(pct, zigzag, 3)] == [1, 2, 3, 4, 5]


def test_a_flat_top_of_the_smoothed_curve_is_one_reversal() -> None:
    """At K = 4 the no-rate takes 5 values and the smoothed curve has flat stretches: a rise, a
    flat top and a fall is one reversal (strict sign changes found none)."""
    pct = np.linspace(0.1, 0.6, 6)
    no_rate = [0.0, 0.5, 0.5, 0.5, 0.5, 0.0]
    # smoothed over 3: 0.25, 1/3, 0.5, 0.5, 1/3, 0.25 (the 0.5s as sums of thirds: ties)
    turns = curves.reversals(pct, no_rate, 3)
    assert [(first, last) for first, last, _ in turns] == [(2, 3)]
    # vertex in the middle of the flat top, (0.5, 1) on the unit square; neighbours (0.2, 0.32)
    # and (0.8, 0.32): the same angle on either side
    smooth = curves.unit_square(curves.moving_average(no_rate))
    half = math.degrees(math.atan2(0.3, 1 - smooth[1]))
    assert turns[0][2] == pytest.approx(2 * half)
    stats = curves.curve_statistics(pct, no_rate, curve_settings())
    assert stats["inflection_rate_120"] == pytest.approx(1 / 6)
    # a flat step on the way up is no reversal; the same without smoothing: one flat top
    assert curves.reversals(pct, [0.0, 0.25, 0.5, 0.5, 0.75, 1.0], smoothing=1) == []
    assert len(curves.reversals(pct, no_rate, smoothing=1)) == 1
    # rounding noise of the moving average is no direction: a curve flat up to 1e-16
    assert curves.reversals(pct, [0.5, 0.5 + 1e-16, 0.5, 0.5 - 1e-16, 0.5, 0.5], 1) == []


def test_post_spike_convergence_on_a_hand_made_curve() -> None:
    """Two peaks: (min of the next 10 cuts − peak) / peak × 100, a negative percentage
    (the old statistic was the absolute drop, 0.5 and 0.5, positive)."""
    two_peaks = [0.25, 0.75, 0.5, 0.25, 1.0, 0.5]
    # peak 0.75 falls to 0.25 (−66.7 %), peak 1.0 to 0.5 (−50 %)
    assert curves.post_spike_convergence(two_peaks) == pytest.approx([-200 / 3, -50.0])
    stats = curves.curve_statistics(np.linspace(0.1, 0.6, 6), two_peaks, curve_settings())
    assert stats["post_spike_convergence"] == pytest.approx((-200 / 3 - 50) / 2)
    curve = [0.2, 0.8, 0.5, 0.6, 0.1, 0.3, 0.9, 0.4]
    # peaks at 1 (0.8; next 10 cuts' min 0.1), 3 (0.6; min 0.1), 6 (0.9; min 0.4)
    expected = [(0.1 - 0.8) / 0.8, (0.1 - 0.6) / 0.6, (0.4 - 0.9) / 0.9]
    assert curves.post_spike_convergence(curve) == pytest.approx([100 * e for e in expected])
    window_1 = [(0.5 - 0.8) / 0.8, (0.1 - 0.6) / 0.6, (0.4 - 0.9) / 0.9]
    assert curves.post_spike_convergence(curve, window=1) == pytest.approx(
        [100 * e for e in window_1]
    )
    stats = curves.curve_statistics(np.linspace(0.1, 0.95, 8), curve, curve_settings())
    assert stats["late_no_rate"] == pytest.approx(np.mean([0.9, 0.4]))  # pct 0.83, 0.95


def test_short_or_peakless_curves_give_nan() -> None:
    settings = curve_settings()
    two = curves.curve_statistics([0.2, 0.5], [0.5, 1.0], settings)
    assert two["no_rate"] == 0.75 and math.isnan(two["post_spike_convergence"])
    assert math.isnan(two["inflection_rate_60"])
    rising = curves.curve_statistics([0.2, 0.5, 0.7], [0.1, 0.5, 0.9], settings)
    assert math.isnan(rising["post_spike_convergence"]) and rising["inflection_rate_60"] == 0


@pytest.mark.parametrize(
    ("section", "values"),
    [
        ("tension", {"k": 0}),
        ("tension", {"sampling": {"temperature": 0}}),
        ("tension", {"embedding": {"threshold": 1.5}}),
        ("tension", {"cuts": {"max_cuts": 0}}),
        ("tension", {"cuts": {"min_pct": -0.1}}),
    ],
)
def test_the_schema_checks_the_settings_ranges(section: str, values: dict) -> None:
    """Ranges are checked once, by the config schema (the code does not check them again)."""
    from snakemake.exceptions import WorkflowError

    config = {"models": [{"name": "m", "source": {"path": "m.gguf"}}], section: values}
    with pytest.raises(WorkflowError):
        schema_defaults(config)


def test_invalid_settings_name_the_key() -> None:
    with pytest.raises(StoryflowError, match=r"min_pct \(.*\) is above tension.cuts.max_pct"):
        cut_settings(min_pct=0.5, max_pct=0.2)
    missing = r"config tension\.cuts has no 'max_story_words', 'max_cuts'"
    with pytest.raises(StoryflowError, match=missing):
        cuts.CutSettings.from_config({"min_pct": 0.1, "max_pct": 0.9, "min_words": 0})
    with pytest.raises(StoryflowError, match=r"\{prefix\}"):
        forecast.ForecastPrompt("", "no field", "")


def test_best_threshold_separates_scores() -> None:
    right, wrong = np.array([0.5, 0.6, 0.7]), np.array([0.1, 0.2, 0.55])
    t = calibration.best_threshold(right, wrong)
    assert 0.2 < t <= 0.5 or 0.55 < t <= 0.6  # 5 of 6 right either way


def cloze_stories(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "story_id": [f"r{i}" for i in range(n)],
            "context": [f"Context {i} one. Two. Three. Four." for i in range(n)],
            "right_ending": [f"right {i}" for i in range(n)],
            "wrong_ending": [f"wrong {i}" for i in range(n)],
        }
    )


def axis_encoder(angles: dict[str, float]):
    """Unit vectors in the plane: text -> (cos a, sin a) with a from ``angles`` (degrees)."""

    def encode(texts):
        a = np.radians([angles[t] for t in texts])
        return np.column_stack([np.cos(a), np.sin(a)])

    return encode


def test_calibration_cuts_are_the_context_with_the_right_ending() -> None:
    cloze = cloze_stories(4)
    cut = calibration.calibration_cuts(cloze, lambda text: len(text.split()), "m").iloc[0]
    assert (cut.prefix, cut.remainder, cut.model, cut.cut) == (cloze.context[0], "right 0", "m", 0)
    assert (cut.prefix_tokens, cut.story_tokens) == (6, 8) and cut.pct == pytest.approx(6 / 8)
    with pytest.raises(StoryflowError, match="at least 4 ROCStories"):
        calibration.calibration_stories(cloze.assign(wrong_ending=["x", "", "y", "z"]), 10)
    with pytest.raises(StoryflowError, match="wrong_ending"):
        calibration.calibration_stories(cloze.drop(columns="wrong_ending"), 10)


def calibration_endings(texts: list[str]) -> pd.DataFrame:
    """Calibration endings of stories r0..r9, two per story (``texts`` in story order)."""
    return pd.DataFrame(
        {
            "story_id": [f"r{i}" for i in range(10) for _ in range(2)],
            "story_type": "rocstories",
            "model": "m",
            "cut": 0,
            "sentence_idx": 3,
            "pct": 0.8,
            "sample": [0, 1] * 10,
            "text": texts,
        }
    )


def test_calibration_fits_on_one_half_and_scores_the_other() -> None:
    cloze = cloze_stories(10)
    # forecasts at 0° (and one empty); right endings at 40° (cos 0.77), wrong at 70° (cos 0.34),
    # except story r0, whose wrong ending is the closer one (10°, cos 0.98)
    angles = {f"right {i}": 40.0 for i in range(10)} | {f"wrong {i}": 70.0 for i in range(10)}
    angles |= {"wrong 0": 10.0, "forecast": 0.0}
    # the contexts: nearer the right ending (35°) but in story r1 (75°)
    angles |= {f"Context {i} one. Two. Three. Four.": 35.0 for i in range(10)}
    angles["Context 1 one. Two. Three. Four."] = 75.0
    endings = calibration_endings(["forecast", "forecast"] * 9 + ["forecast", " "])
    encode = axis_encoder(angles)
    cosines = calibration.ending_cosines(endings, cloze, encode, 3, 128)
    assert len(cosines) == 19 and set(cosines["half"]) == {"fit", "held-out"}
    assert cosines.groupby("story_id")["half"].nunique().eq(1).all()  # a story in one half
    by_story = cosines.drop_duplicates("story_id").set_index("story_id")
    echoes = by_story["context_right"] > by_story["context_wrong"]
    assert echoes.sum() == 9 and not echoes["r1"]
    threshold, table = calibration.calibrate_threshold(endings, cosines, 3, "e")
    assert np.cos(np.radians(70)) < threshold <= np.cos(np.radians(40))
    assert table["half"].tolist() == ["fit", "held-out"]
    assert table["n_stories"].tolist() == [5, 5] and table["n_forecasts"].sum() == 19
    assert table["n_empty"].sum() == 1 and (table["k"] == 2).all()
    # only r0's two forecasts are misclassified (their wrong ending lies above the threshold)
    half_of_r0 = table.set_index("half").loc[lambda t: t["accuracy"] < 1]
    assert len(half_of_r0) == 1
    row = half_of_r0.iloc[0]
    assert row["accuracy"] == pytest.approx(1 - 2 / (2 * row["n_forecasts"]))
    assert row["pairwise_accuracy"] == pytest.approx(1 - 2 / row["n_forecasts"])
    # the halves are seeded: the same seed gives the same table
    again = calibration.ending_cosines(endings, cloze, encode, 3, 128)
    pd.testing.assert_frame_equal(table, calibration.calibrate_threshold(endings, again, 3, "e")[1])
    assert calibration.split_halves(list(reversed(cloze["story_id"])), 3) == (
        calibration.split_halves(cloze["story_id"], 3)
    )


def test_llm_judge_calibration_asks_about_the_held_out_half_against_both_endings() -> None:
    from storyflow.lm.answers import ClosedAnswer

    cloze = cloze_stories(10)
    endings = calibration_endings(["forecast"] * 19 + [""])
    asked = []

    def answer(prompts: list[str]) -> list[ClosedAnswer]:
        asked.extend(prompts)
        p_yes = [0.9 if prompt.startswith("right") else 0.2 for prompt in prompts]
        return [ClosedAnswer(("Y", "N"), (0.0, 0.0), (p, 1 - p), 0.5, (), ()) for p in p_yes]

    verdicts = calibration.judge_calibration(
        endings, cloze, 3, answer, lambda actual, predicted: f"{actual} | {predicted}", "j"
    )
    halves = calibration.split_halves(endings["story_id"], 3)
    held = [sid for sid, half in halves.items() if half == "held-out"]
    assert set(verdicts["story_id"]) == set(held) and (verdicts["half"] == "held-out").all()
    judged = verdicts[verdicts["status"] == "judged"]
    empty = int((endings["story_id"].isin(held) & (endings["text"] == "")).sum())
    assert len(asked) == len(judged) == 2 * (2 * len(held) - empty)  # two prompts a forecast
    assert (judged.loc[judged["ending"] == "right", "match"]).all()
    assert not (judged.loc[judged["ending"] == "wrong", "match"]).any()
    assert verdicts["score"].isna().sum() == 2 * empty


def test_llm_judge_calibration_sizes_the_window_to_both_endings_and_names_the_judge() -> None:
    """Rule judge_calibration_endings' entry point: the judge's window fits the longest prompt
    of any forecast against the right or the (longer) wrong ending, and the verdicts carry the
    model's name."""
    cloze = cloze_stories(10)
    cloze["wrong_ending"] = cloze["wrong_ending"] + " " + " ".join(["word"] * 300)
    endings = calibration_endings(["hit"] * 20)
    model = WordJudge()
    settings = {"system": "sys", "user": "A: {actual} P: {predicted}", "cue": ""}
    verdicts = calibration.judge_calibration_with_model(endings, cloze, 3, model, settings)
    frame = judges.JudgePrompt("sys", "A: {actual} P: {predicted}", "")
    longest = max(model.count(frame.render(model, a, "hit")) for a in cloze["wrong_ending"])
    assert longest + 16 <= model.n_ctx < longest + 16 + 64 and model.n_ctx % 64 == 0
    assert (verdicts["judge"] == "judge-llm").all() and len(model.asked) == len(verdicts)
    assert set(verdicts["ending"]) == {"right", "wrong"}


def test_embedding_reads_a_long_text_whole() -> None:
    """all-MiniLM-L6-v2 reads 256 word pieces: a longer text is embedded in runs of at most
    ``chunk_words`` words, its vector the renormalised mean of theirs (the old judge embedded
    the first ~200 words only)."""
    seen = []

    def encode(texts):
        seen.extend(texts)
        # a word "up" points along x, "down" along y; a text: the unit mean of its words
        vectors = np.array(
            [[t.split().count("up"), t.split().count("down")] for t in texts], dtype=float
        )
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    long = " ".join(["up"] * 10 + ["down"] * 30)  # 40 words: 4 runs of 10 at chunk_words 10
    short = "up down"
    vectors = judges.embed_whole(encode, [long, short], chunk_words=10)
    assert seen == ["up " * 9 + "up", *["down " * 9 + "down"] * 3, short]
    # the mean of (1, 0) and three (0, 1): (1, 3) / sqrt(10); the short text as the encoder
    assert vectors[0] == pytest.approx(np.array([1, 3]) / math.sqrt(10))
    assert vectors[1] == pytest.approx(np.array([1, 1]) / math.sqrt(2))
    seen.clear()
    truncated = judges.embed_whole(encode, [long], chunk_words=None)  # one piece: as it is
    assert seen == [long] and truncated[0] == pytest.approx(np.array([1, 3]) / math.sqrt(10))
    # nearly equal runs: 25 words at 10 per run are 3 runs of 9, 8 and 8
    seen.clear()
    judges.embed_whole(encode, [" ".join(["up"] * 25)], chunk_words=10)
    assert [len(t.split()) for t in seen] == [9, 8, 8]


def test_paired_effects_pair_by_prompt_and_drop_artefacts() -> None:
    rows = []
    for prompt in range(5):
        rows.append((f"Human-{prompt}", "Human", 0.2 + 0.01 * prompt, False))
        rows.append((f"A-{prompt}", "A", 0.5 + 0.02 * prompt, prompt == 0))
    frame = pd.DataFrame(rows, columns=["story_id", "story_type", "no_rate", "artefact"])
    stories = frame.assign(model="m", judge="j", late_no_rate=np.nan, post_spike_convergence=np.nan)
    labels = frame.assign(prompt_id=[i // 2 for i in range(10)])
    settings = intervals(resamples=500, seed=1)
    effects = compare.paired_effects(stories, labels, 4, settings)
    no_rate = effects[(effects["measure"] == "no_rate") & (effects["group_b"] == "A")]
    kept = no_rate.set_index("artefacts")
    assert (no_rate["contrast"] == "Human vs A").all()
    assert kept.loc["included", "n_a"] == 5 and kept.loc["excluded", "n_a"] == 4
    included = kept.loc["included"]
    # Human - A per prompt: -(0.3 + 0.01 * prompt), mean -0.32 (n = 5)
    assert included["diff"] == pytest.approx(included["mean_a"] - included["mean_b"])
    assert included["diff"] == pytest.approx(-0.32)
    # the CI is the bootstrap of the mean paired difference: inside the differences' range
    diffs = -(0.3 + 0.01 * np.arange(5))
    expected = bootstrap.Resampling(confidence=0.95, resamples=500, seed=1).mean_ci(diffs)[1:]
    assert (included["diff_ci_low"], included["diff_ci_high"]) == pytest.approx(expected)
    assert diffs.min() <= included["diff_ci_low"] < included["diff_ci_high"] <= diffs.max()
    assert included["t"] < 0 and included["g"] < 0 and included["tested"]
    # without the artefact story 4 pairs remain, fewer than stats.min_group_size (5): the
    # difference stays, nothing is tested
    excluded = kept.loc["excluded"]
    assert excluded["diff"] == pytest.approx(np.mean(diffs[1:])) and not excluded["tested"]
    assert "4 pairs < stats.min_group_size (5)" in excluded["flag"]
    assert excluded[["diff_ci_low", "t", "w", "g"]].isna().all()
    # no validity table given: every row says its models were not checked
    assert not effects["valid"].any() and effects["failed"].str.contains("not checked").all()


def test_group_means_of_shares_stay_inside_0_1_and_small_groups_keep_a_flagged_interval() -> None:
    """The HANNA late no-rate of a 4-story group had a t interval of [-0.19, 0.57]; here a
    hand-made group of 4 no-rates (0, 0, 0, 1): t leaves [0, 1], the bootstrap does not, and
    below stats.min_group_size the interval is kept (every plotted mean has one) and
    flagged; a single story has none."""
    values = [0.0, 0.0, 0.0, 1.0]
    stories = pd.DataFrame(
        {
            "story_id": list("abcd"), "story_type": "g", "model": "m", "judge": "j",
            "no_rate": values, "late_no_rate": np.nan, "post_spike_convergence": np.nan,
        }
    )  # fmt: skip
    half = sps.t.ppf(0.975, 3) * np.std(values, ddof=1) / 2
    assert 0.25 - half < 0 and 0.25 + half > 1  # the old t interval
    small = intervals(min_group_size=4, resamples=1000, seed=3)
    row = compare.group_means(stories, 4, small).iloc[0]
    assert row["n"] == 4 and row["mean"] == pytest.approx(0.25) and row["flag"] == ""
    assert 0 <= row["ci_low"] <= 0.25 <= row["ci_high"] <= 1
    assert row["sd"] == pytest.approx(0.5)
    default = compare.group_means(stories, 4, intervals()).iloc[0]
    assert default["mean"] == pytest.approx(0.25) and default["n"] == 4
    assert 0 <= default["ci_low"] <= 0.25 <= default["ci_high"] <= 1
    assert default["flag"] == ("4 stories < stats.min_group_size (5): an interval of few stories")
    one = compare.group_means(stories.iloc[:1], 4, intervals()).iloc[0]
    assert math.isnan(one["ci_low"]) and math.isnan(one["ci_high"])


def test_unpaired_contrasts_need_the_minimum_group_size() -> None:
    ids = [f"s{i}" for i in range(12)]
    labels = pd.DataFrame({"story_id": ids, "story_type": ["a"] * 8 + ["b"] * 4})
    stories = labels.assign(
        model="m", judge="j", no_rate=[0.6, 0.7, 0.8, 0.9, 0.6, 0.7, 0.8, 0.9, 0.1, 0.2, 0.3, 0.2],
        late_no_rate=np.nan, post_spike_convergence=np.nan,
    )  # fmt: skip
    contrast = [{"name": "a vs b", "a": {"story_type": "a"}, "b": {"story_type": "b"}}]
    settings = intervals(resamples=500, seed=2)
    small = compare.contrast_effects(stories, labels, contrast, 4, settings).iloc[0]
    assert (small["n_a"], small["n_b"]) == (8, 4) and small["diff"] == pytest.approx(0.75 - 0.2)
    assert not small["tested"] and math.isnan(small["g"]) and math.isnan(small["diff_ci_low"])
    assert "4 stories in a group < stats.min_group_size (5)" in small["flag"]
    enough = intervals(resamples=500, seed=2, min_group_size=4)
    row = compare.contrast_effects(stories, labels, contrast, 4, enough).iloc[0]
    assert row["tested"] and row["flag"] == "" and row["g"] > 0 and row["t"] > 0
    assert 0 < row["diff_ci_low"] < 0.55 < row["diff_ci_high"] < 1


def test_figures_draw_the_example_stories_and_every_table(tmp_path) -> None:
    from storyflow.figures import tension as figures

    rows = []
    for sid, group, n in [("a", "x", 3), ("b", "x", 5), ("c", "y", 4)]:
        for cut in range(n):
            rows.append((sid, group, "m", cut, cut, (cut + 1) / (n + 1), "j", 4, 4, cut % 2, 0))
    rate_columns = ("no_rate", "no_rate_judged")
    frame = pd.DataFrame(
        rows, columns=[c for c in tables.TENSION_CURVES.names if c not in rate_columns]
    )
    share = frame["n_no"] / frame["n_judged"]
    rates = tables.TENSION_CURVES.frame(frame.assign(no_rate=share, no_rate_judged=share))
    assert figures.example_stories(rates) == ["b", "c"]  # the most cuts per group
    stats = curves.story_statistics(rates, curve_settings())
    groups = compare.group_means(stats, 4, intervals(min_group_size=2))
    figures.plot_example_curves(rates, [tmp_path / "curves.png"], 50, smoothing=3, angle=60.0)
    figures.plot_tension_by_group(groups, [tmp_path / "groups.png"], 50)
    figures.plot_inflection_rates(groups, [tmp_path / "rates.png", tmp_path / "rates.pdf"], 50)
    for name in ("curves.png", "groups.png", "rates.png", "rates.pdf"):
        assert (tmp_path / name).stat().st_size > 1000


# --- validity checks -----------------------------------------------------------------------------


def hand_cosines(wins_per_story: list[int], k: int = 4, model: str = "f") -> pd.DataFrame:
    """Calibration cosines of len(wins_per_story) stories with k forecasts each, of which the
    first ``wins`` are nearer the right ending (0.6 vs 0.2) and the rest nearer the wrong one
    (0.3 vs 0.5); stories alternate fit / held-out; the context is nearer the right ending in
    three stories of four."""
    rows = []
    for i, wins in enumerate(wins_per_story):
        context_right = 0.5 if i % 4 < 3 else 0.3
        for sample in range(k):
            right, wrong = (0.6, 0.2) if sample < wins else (0.3, 0.5)
            rows.append(
                tables.TENSION_CALIBRATION_COSINES.row(
                    model=model,
                    story_id=f"r{i}",
                    sample=sample,
                    half="fit" if i % 2 == 0 else "held-out",
                    right=right,
                    wrong=wrong,
                    context_right=context_right,
                    context_wrong=0.4,
                )
            )
    return tables.TENSION_CALIBRATION_COSINES.frame(rows)


#: The tension checks' settings as the plan passes them, at the schema's thresholds (pairwise
#: accuracy 0.5 for the forecaster and the judge, balanced accuracy 0.6 for the judge), with 95 %
#: intervals of 1,000 resamples, seed 5.
CHECKS = tension_validity.CheckSettings.from_params(
    plan.tension.check_settings(
        schema_defaults({**BARE_CONFIG, "stats": {"resamples": 1000, "seed": 5}})
    )
)


def test_forecaster_check_needs_its_interval_above_chance() -> None:
    good = tension_validity.forecaster_check(hand_cosines([4, 3, 4, 3] * 5), "f", CHECKS)
    table = validity.frame([good]).iloc[0]
    assert (table["role"], table["model"]) == ("forecaster", "f")
    assert table["check"] == "pairwise_accuracy"
    assert table["value"] == pytest.approx(70 / 80) and table["n"] == 80
    assert 0.5 < table["ci_low"] < 0.875 < table["ci_high"] <= 1 and table["passed"]
    assert table["rule"] == "ci_low > threshold" and table["threshold"] == 0.5
    assert (
        "the context sentences themselves, as a forecast: 0.750 of the stories" in (table["detail"])
    )
    # SmolLM2-like: 56 % nearer the right ending over 20 stories that differ a lot: the
    # interval reaches below 0.5
    weak = tension_validity.forecaster_check(hand_cosines([4, 1, 3, 1] * 5), "f", CHECKS)
    weak = validity.frame([weak]).iloc[0]
    assert weak["value"] == pytest.approx(0.5625) and weak["ci_low"] < 0.5 < weak["ci_high"]
    assert not weak["passed"]


def test_judge_checks_on_held_out_forecasts() -> None:
    cosines = hand_cosines([4, 4, 3, 2] * 5)
    # threshold 0.4: right 0.6 matches, right 0.3 does not; wrong 0.2 does not, 0.5 does
    verdicts = tension_validity.embedding_verdicts(cosines, 0.4)
    held = cosines[cosines["half"] == "held-out"]
    assert len(verdicts) == len(held) == 40  # stories r1, r3, ...: 4 and 2 wins
    rows = validity.frame(tension_validity.judge_rows(verdicts, "f", "embedding", CHECKS, "t"))
    assert rows["check"].tolist() == [
        "balanced_accuracy[f]", "balanced_accuracy_vs_chance[f]", "pairwise_accuracy[f]"
    ]  # fmt: skip
    # 30 of 40 forecasts win: right matches 30/40, wrong rejected 30/40: balanced 0.75, and
    # 30 of 40 score higher against the right ending: pairwise 0.75
    assert rows["value"].tolist() == pytest.approx([0.75, 0.75, 0.75])
    assert rows["passed"].all() and (rows["model"] == "embedding").all()
    assert 0.5 < rows.loc[2, "ci_low"] < 0.75 < rows.loc[2, "ci_high"] <= 1
    # a judge that says "match" to everything: balanced accuracy 0.5, fails both; its scores
    # still rank the endings (pairwise passes): it ranks but cannot decide
    always = verdicts.assign(right_match=True, wrong_match=True)
    rows = validity.frame(tension_validity.judge_rows(always, "f", "yes-man", CHECKS, "t"))
    assert rows["value"].tolist() == pytest.approx([0.5, 0.5, 0.75])
    assert rows["passed"].tolist() == [False, False, True]
    # scores that do not rank the endings: pairwise at chance fails
    flat = verdicts.assign(right_score=0.5, wrong_score=0.5)
    rows = validity.frame(tension_validity.judge_rows(flat, "f", "flat", CHECKS, "t"))
    assert rows.loc[2, "value"] == 0 and not rows.loc[2, "passed"]


def test_llm_judge_verdicts_and_the_labels_of_results() -> None:
    def judgment(sid, sample, ending, score, mass, match, status) -> dict[str, object]:
        return tables.TENSION_CALIBRATION_JUDGMENTS.row(
            **cut_columns(sid, "rocstories", "f", cut=0, sentence_idx=3, pct=0.8),
            sample=sample, judge="llm", score=score, mass=mass, match=match, status=status,
            ending=ending, half="held-out",
        )  # fmt: skip

    judged = tables.TENSION_CALIBRATION_JUDGMENTS.frame(
        judgment(sid, sample, ending, score, 0.9, match, status)
        for sid in ("r1", "r3", "r5", "r7", "r9")
        for sample in range(2)
        for ending, score, match, status in (
            ("right", 0.8, True, "judged"),
            ("wrong", 0.6 if sample else np.nan, True if sample else None,
             "judged" if sample else "empty answer set"),
        )
    )  # fmt: skip
    empty = tables.TENSION_CALIBRATION_JUDGMENTS.frame(
        judgment("r1", 2, ending, np.nan, np.nan, None, "empty forecast")
        for ending in ("right", "wrong")
    )
    judged = pd.concat([judged, empty], ignore_index=True)
    wide = tension_validity.model_verdicts(judged)  # a forecast without text was not asked
    assert len(wide) == 10 and wide["wrong_match"].isna().sum() == 5
    cosines = hand_cosines([4] * 10)
    fitted = pd.DataFrame({"threshold": [0.4]})
    threshold = tension_validity.embedding_threshold(None, fitted)
    assert threshold == (0.4, "fitted on the fit half")
    assert tension_validity.embedding_threshold(0.7, fitted) == (0.7, "tension.embedding.threshold")
    table = tension_validity.checks(
        "f", cosines, threshold, {"llm": judged}, ["embedding", "llm"], CHECKS
    )
    assert table["role"].tolist() == ["forecaster", *["judge"] * 6]
    llm = table[table["model"] == "llm"]
    # right: 10 of 10 match; wrong: 5 verdicts, all "match" (wrong): balanced (1 + 0) / 2;
    # scores against both endings for 5 forecasts, all higher against the right one
    assert llm["value"].tolist() == pytest.approx([0.5, 0.5, 1.0])
    assert llm["passed"].tolist() == [False, False, True]
    assert llm["n"].tolist() == [10, 10, 5]
    assert "P(Y) > 0.5" in llm["detail"].iloc[0]
    assert tension_verdict.labels(table, "f", "embedding") == (True, "")
    valid, failed = tension_verdict.labels(table, "f", "llm")
    assert not valid
    assert failed == "judge llm balanced_accuracy, balanced_accuracy_vs_chance"
    assert tension_verdict.labels(table, "g", "embedding") == (
        False, "forecaster g not checked; judge embedding not checked"
    )  # fmt: skip


def test_figures_draw_failed_models_hollow_and_grey_and_single_stories_without_bars() -> None:
    from matplotlib.colors import to_rgba

    from storyflow.figures import tension as figures

    rows = []
    for model, judge, valid in (("good", "embedding", True), ("bad", "embedding", False)):
        for measure in ("no_rate", "inflection_rate_60", "inflection_rate_120"):
            for group, n in (("x", 10), ("y", 1)):
                low, high = (0.3, 0.6) if n >= 2 else (np.nan, np.nan)
                rows.append(
                    tables.TENSION_GROUPS.row(
                        model=model, judge=judge, k=4, story_type=group, measure=measure, n=n,
                        mean=0.45, sd=0.1, ci_low=low, ci_high=high,
                        flag="" if n >= 5 else "1 stories < stats.min_group_size (5): one story",
                        valid=valid, failed="" if valid else "forecaster bad pairwise_accuracy",
                    )
                )  # fmt: skip
    groups = tables.TENSION_GROUPS.frame(rows)
    fig = figures.tension_by_group_figure(groups)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[0] == "good / embedding (K = 4)"
    assert labels[1] == (
        "bad / embedding (K = 4): failed validity (forecaster bad pairwise_accuracy)"
    )
    assert "one story, no interval" in labels[2]
    handles = fig.legends[0].legend_handles
    assert handles[1].get_markerfacecolor() == "none"
    assert to_rgba(handles[1].get_color()) == to_rgba(figures.FAILED_COLOR)
    no_rate = fig.axes[0]
    # per series: one error bar (group x) and one bare hollow point (group y)
    assert len(no_rate.containers) == 2
    with_bars = [container.lines[0] for container in no_rate.containers]
    caps = [cap for container in no_rate.containers for cap in container.lines[1]]
    bare = [line for line in no_rate.lines if line not in with_bars + caps]
    assert [len(line.get_xdata()) for line in bare] == [1, 1]  # group y of either series
    assert all(line.get_markerfacecolor() == "none" for line in bare)
    assert to_rgba(with_bars[0].get_markerfacecolor()) == to_rgba("C0")  # valid: filled
    failed_bar = no_rate.containers[1].lines[0]
    assert to_rgba(failed_bar.get_color()) == to_rgba(figures.FAILED_COLOR)
    assert failed_bar.get_markerfacecolor() == "none"
    rates = figures.inflection_rates_figure(groups)
    titles = [ax.get_title() for ax in rates.axes]
    assert titles == [
        "good / embedding", "bad / embedding\nfailed validity: forecaster bad pairwise_accuracy"
    ]  # fmt: skip
    assert all(len(ax.containers) == 1 for ax in rates.axes)  # group x's bars; y has none


# --- the plan -------------------------------------------------------------------------------------


def test_the_plan_checks_models_before_the_summary_and_serves_models_without_weights(
    snakemake, tmp_path
) -> None:
    """A dry run of the tiny tension config with a served forecaster and a served LLM judge
    next to the local SmolLM2: every forecaster gets its validity checks, which the summary
    reads (upstream of every labelled result); the served model gets every tension job (cuts,
    endings, calibration, the LLM judge's calibration and verdicts) and never a GGUF."""
    import yaml
    from test_reruns import parse_jobs

    repo = Path(__file__).resolve().parents[1]
    config = yaml.safe_load((repo / "tests" / "config" / "tension.yaml").read_text())
    tiny = yaml.safe_load((repo / "tests" / "config" / "tiny.yaml").read_text())
    served = {
        "name": "served",
        "variant": "instruct",
        "roles": ["tension.forecaster", "tension.judge"],
        "source": {"server": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}},
    }
    local = "smollm2-135m-instruct"
    change = {
        "models": [*tiny["models"], served],
        "tension": {**config["tension"], "forecasters": [local, "served"]},
    }
    path = tmp_path / "served.yaml"
    path.write_text(yaml.safe_dump(change))
    result = snakemake(
        tmp_path / "run",
        "--dry-run",
        configfiles=[repo / "tests" / "config" / "tension.yaml", path],
        targets=["results/hippocorpus/tension/tables/group_means.csv"],
    )
    jobs = parse_jobs(result.stdout)
    summary = next(job for job in jobs if job["rule"] == "summarize_tension")
    for forecaster in (local, "served"):
        assert f"results/tension/tables/validity/{forecaster}.csv" in summary["input"]
    checks = {job["wc_model"]: job for job in jobs if job["rule"] == "check_tension_validity"}
    assert set(checks) == {local, "served"}
    # judges null: the embedding judge and the model with the role, on both forecasters
    for forecaster in (local, "served"):
        assert f"judgments/{forecaster}/served.parquet" in checks[forecaster]["input"]
    rules = {(job["rule"], job.get("wc_model"), job.get("wc_judge")) for job in jobs}
    for rule in ("plan_tension_cuts", "sample_endings", "sample_calibration_endings"):
        assert (rule, "served", None) in rules
    assert ("judge_calibration_endings", local, "served") in rules
    assert ("judge_endings", "served", "served") in rules
    assert not [job for job in jobs if "served.gguf" in job.get("input", "")]
    assert ("materialize_model", "served", None) not in rules


def test_the_judges_context_window_holds_its_longest_prompt() -> None:
    """The LLM judge's window is sized to its prompts (it was a fixed 4,096 tokens, too short
    for the remainder of an early cut in a 5,000-word story)."""

    frame = judges.JudgePrompt("sys", "A: {actual} P: {predicted}", "")
    remainder = " ".join(["word"] * 6000)
    words = WordJudge()  # words are tokens
    window = judges.judge_window(words, frame, ["short", remainder], ["an ending", "end"])
    longest = words.count(frame.render(words, remainder, "an ending"))
    assert longest + 16 <= window < longest + 16 + 64 and window % 64 == 0


# --- the rules' entry points: judge_endings, score_pmi, summarize --------------------------------

CURVES = {"late_pct": 0.8, "window": 10, "smoothing": 3, "angles": [60, 120], "min_cuts": 3}


def one_story_cuts() -> pd.DataFrame:
    """Story s1 cut after sentences 0..3 (pct 0.2..0.8), remainders r0..r3."""
    return tables.TENSION_CUTS.frame(
        tables.TENSION_CUTS.row(
            **cut_columns("s1", "recalled", "f", cut=cut, sentence_idx=cut, pct=0.2 * (cut + 1)),
            prefix_tokens=cut + 1, story_tokens=5, unit="tokens", prefix=f"p{cut}",
            remainder=f"r{cut}",
        )
        for cut in range(4)
    )  # fmt: skip


def two_endings_per_cut(texts: list[tuple[str, str]]) -> pd.DataFrame:
    """Two endings of each cut of :func:`one_story_cuts`, ``texts[cut]``."""
    return tables.TENSION_ENDINGS.frame(
        tables.TENSION_ENDINGS.row(
            **cut_columns("s1", "recalled", "f", cut=cut, sentence_idx=cut, pct=0.2 * (cut + 1)),
            sample=sample, seed=7, text=text, n_tokens=3, finish_reason="stop",
        )
        for cut, pair in enumerate(texts)
        for sample, text in enumerate(pair)
    )  # fmt: skip


#: hit: the remainder's direction (cos 1); near: 50 degrees off (cos 0.64); miss: 90 (cos 0)
ENDINGS = [("hit", "miss"), ("near", "near"), ("miss", ""), ("hit", "hit")]
ANGLES = {"hit": 0.0, "near": 50.0, "miss": 90.0} | {f"r{cut}": 0.0 for cut in range(4)}


def test_judge_endings_reads_the_calibrated_threshold_and_gives_the_curve(
    tmp_path, monkeypatch
) -> None:
    opened = []

    def load_encoder(name, *, threads, key):
        opened.append((name, threads, key))
        return axis_encoder(ANGLES)

    monkeypatch.setattr(judges, "load_encoder", load_encoder)
    calibration = tmp_path / "calibration.csv"
    tables.TENSION_CALIBRATION.frame(
        tables.TENSION_CALIBRATION.row(
            model="f", k=2, embedding_model="e", seed=1, half=half, n_stories=5, n_forecasts=10,
            n_empty=0, threshold=0.5, accuracy=0.9, pairwise_accuracy=0.9, mean_right=0.7,
            mean_wrong=0.3,
        )
        for half in ("fit", "held")
    ).to_csv(calibration, index=False)  # fmt: skip
    settings = {"kind": "embedding", "model": "e", "threshold": None, "chunk_words": 128}
    endings, cuts = two_endings_per_cut(ENDINGS), one_story_cuts()

    def judge(settings):
        return judges.judge_endings(
            endings, cuts, settings, CURVES, judge_model={}, config_models=[], model_path=None,
            calibration=calibration, threads=3,
        )  # fmt: skip

    verdicts, rates, stories = judge(settings)
    assert opened == [("e", 3, "tension.embedding.model")]
    assert verdicts["score"].round(6).tolist()[:4] == pytest.approx(
        [1.0, 0.0, np.cos(np.radians(50)), np.cos(np.radians(50))]
    )
    # threshold 0.5 from the calibration table: "near" (cos 0.64) captures the remainder
    assert rates["no_rate"].tolist() == [0.5, 0.0, 1.0, 0.0]
    assert rates["n_unjudged"].tolist() == [0, 0, 1, 0]  # the empty forecast
    assert verdicts["status"].tolist().count(judges.EMPTY_FORECAST) == 1
    story = stories.iloc[0]
    assert story["no_rate"] == pytest.approx((0.5 + 0 + 1 + 0) / 4)
    assert story["late_no_rate"] == 0.0 and story["n_unjudged"] == 1
    assert {"inflection_rate_60", "inflection_rate_120"} <= set(stories.columns)
    # a threshold fixed in the config is used as it is (the calibration file is not read)
    _, fixed, _ = judge({**settings, "threshold": 0.7})
    assert fixed["no_rate"].tolist() == [0.5, 1.0, 1.0, 0.0]
    with pytest.raises(StoryflowError, match="no calibration table"):
        judges.embedding_threshold(settings, None)


class WordJudge:
    """A stand-in LLM judge (words are tokens, the prompt is its messages' text): P(Y) 0.8 for
    an ending that says "hit", else 0.3."""

    name = "judge-llm"

    def __init__(self) -> None:
        self.n_ctx = 2048
        self.asked = []

    def render(self, messages, cue=""):
        return " ".join(m["content"] for m in messages)

    def count(self, prompt):
        return len(prompt.split())

    def count_text(self, text):
        return len(text.split())

    def answers(self, prompts, options):
        from storyflow.lm.answers import ClosedAnswer

        self.asked.extend(prompts)
        p_yes = [0.8 if prompt.endswith("P: hit") else 0.3 for prompt in prompts]
        return [ClosedAnswer(("Y", "N"), (0.0, 0.0), (p, 1 - p), 0.9, (), ()) for p in p_yes]


def test_judge_endings_opens_the_llm_judge_through_connect_and_sizes_its_window(
    monkeypatch,
) -> None:
    model, opened = WordJudge(), []

    def open_model(spec, path, *, n_threads, share_prefix):
        opened.append((spec.name, spec.prompt, path, n_threads, share_prefix))
        return model

    monkeypatch.setattr(judges, "open_model", open_model)
    settings = {"kind": "llm", "model": "judge-llm", "system": "sys",
                "user": "A: {actual} P: {predicted}", "cue": ""}  # fmt: skip
    spec = {"name": "judge-llm", "variant": "base", "prompt": "plain", "backend": "llama.cpp",
            "dtype": "float32"}  # fmt: skip
    entry = {**spec, "family": "test", "size": "tiny", "source": {"path": "judge.gguf"}}
    verdicts, rates, _ = judges.judge_endings(
        two_endings_per_cut(ENDINGS), one_story_cuts(), settings, CURVES, judge_model=spec,
        config_models=[entry], model_path="judge.gguf", calibration=None, threads=2,
    )  # fmt: skip
    assert opened == [("judge-llm", "plain", "judge.gguf", 2, True)]  # endings branched per cut
    # frame "sys A: P:" (3 words) + longest remainder (1) and ending (1) + 16: one block of 64
    assert model.n_ctx == 64
    assert len(model.asked) == 7 and model.asked[0] == "sys A: r0 P: hit"  # not the empty one
    assert set(verdicts["judge"]) == {"judge-llm"}
    assert verdicts["score"].dropna().tolist() == [0.8, 0.3, 0.3, 0.3, 0.3, 0.8, 0.8]
    assert rates["no_rate"].tolist() == [0.5, 1.0, 1.0, 0.0]


class WordScorer:
    """Words are tokens (ids in order of first use; start token 0); a token's log-prob is
    -0.5 when it already occurred after the start token, else -2."""

    start_token = 0

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def tokenize(self, text):
        return [self.ids.setdefault(w, len(self.ids) + 1) for w in text.split()]

    def logprobs(self, prefix, continuation):
        seen, out = set(prefix[1:]), []
        for token in continuation:
            out.append(-0.5 if token in seen else -2.0)
            seen.add(token)
        return np.array(out)


class ScoringModel:
    name = "lm"

    def __init__(self) -> None:
        self.n_ctx, self.opened_with = 2048, None

    def scorer(self):
        self.opened_with = self.n_ctx
        return WordScorer()


def test_score_pmi_opens_the_scorer_with_the_longest_story_and_scores_each_cut() -> None:
    from storyflow.measures.tension import likelihood

    sentences = pd.DataFrame(
        {"story_id": "s1", "sentence_idx": [0, 1, 2],
         "text": ["the cat sat", "the cat ran", "a dog barked"]}
    )  # fmt: skip
    cuts = tables.TENSION_CUTS.frame(
        tables.TENSION_CUTS.row(
            **cut_columns("s1", "recalled", "lm", cut=cut, sentence_idx=cut, pct=(cut + 1) / 3),
            prefix_tokens=3 * (cut + 1), story_tokens=9, unit="tokens", prefix="", remainder="",
        )
        for cut in range(2)
    )  # fmt: skip
    model = ScoringModel()
    pmi = likelihood.score_pmi(model, cuts, sentences)
    assert model.opened_with == 9 + 8  # the longest story and the start token, before loading
    # after "the cat sat": "the cat" repeat (-0.5 each) in context, all new (-2) alone
    assert pmi["n_tokens"].tolist() == [6, 3]
    assert pmi["nll_context"].tolist() == pytest.approx([(0.5 + 0.5 + 4 * 2) / 6, 2.0])
    assert pmi["nll_alone"].tolist() == pytest.approx([2.0, 2.0])
    assert pmi["pmi"].tolist() == pytest.approx([2.0 - 1.5, 0.0])
    assert set(pmi["model"]) == {"lm"}
    assert likelihood.pmi_window(cuts.iloc[:0]) == 64


def test_summarize_reads_the_files_and_picks_the_design_of_the_corpus(tmp_path) -> None:
    ids = [f"s{i}" for i in range(10)]
    groups = ["imagined"] * 5 + ["recalled"] * 5
    no_rate = [0.1, 0.2, 0.3, 0.4, 0.45, 0.55, 0.6, 0.7, 0.8, 0.9]
    stories = pd.DataFrame(
        {"story_id": ids, "story_type": groups, "text": "x", "topic": "", "has_topic": False}
    )
    stories.to_parquet(tmp_path / "stories.parquet")
    scores = pd.DataFrame(
        {"story_id": ids, "story_type": groups, "model": "f", "judge": "embedding", "n_cuts": 4,
         "n_unjudged": 0, "no_rate": no_rate, "late_no_rate": np.nan,
         "post_spike_convergence": np.nan, "inflection_rate_60": 0.25}
    )  # fmt: skip
    scores.to_parquet(tmp_path / "scores.parquet")
    pmi = tables.TENSION_PMI.frame(
        tables.TENSION_PMI.row(
            **cut_columns(sid, g, "lm", cut=0, sentence_idx=0, pct=0.5),
            n_tokens=4, nll_alone=2.0, nll_context=2.0 - 0.1 * i, pmi=0.1 * i,
        )
        for i, (sid, g) in enumerate(zip(ids, groups, strict=True))
    )  # fmt: skip
    pmi.to_parquet(tmp_path / "pmi.parquet")
    contrasts = [{"name": "imagined_vs_recalled", "a": "imagined", "b": "recalled"}]
    intervals = {"confidence": 0.95, "resamples": 200, "seed": 1, "min_group_size": 5}

    def summarize(pmi_files, stories_file="stories.parquet", scores_file="scores.parquet"):
        settings = compare.SummarySettings.from_params(
            {"k": 2, "intervals": intervals, "contrasts": contrasts, "forecasters": ["f"],
             "judges": ["embedding"], "pmi_models": ["lm"] if pmi_files else []}
        )  # fmt: skip
        return compare.summarize(
            tmp_path / stories_file, [tmp_path / scores_file], pmi_files, [], settings
        )

    means, effects, likelihood, measures = summarize([tmp_path / "pmi.parquet"])
    by_group = means[means["measure"] == "no_rate"].set_index("story_type")["mean"]
    assert by_group.to_dict() == pytest.approx({"imagined": 0.29, "recalled": 0.71})
    assert not means["valid"].any()  # no validity table: nothing passed
    no_rate_effect = effects[effects["measure"] == "no_rate"].iloc[0]
    assert no_rate_effect["pairing"] == "none" and no_rate_effect["diff"] == pytest.approx(-0.42)
    # PMI rises with the no-rate story by story: Spearman's rho 1
    assert likelihood["spearman_rho"].tolist() == pytest.approx([1.0])
    pmi_measure = measures[measures["measure"] == "tension.pmi"]
    assert pmi_measure["value"].tolist() == pytest.approx([0.1 * i for i in range(10)])
    assert "tension.no_rate.embedding" in set(measures["measure"])
    # no PMI table: an empty likelihood table and no PMI measure
    _, _, likelihood, measures = summarize([])
    assert likelihood.empty and list(likelihood.columns) == tables.TENSION_LIKELIHOOD.names
    assert not measures["measure"].str.contains("pmi").any()
    # stories paired by prompt (HANNA: a human and an LLM story per prompt): the paired design
    hanna = {"story_type": ["Human"] * 5 + ["A"] * 5, "prompt_id": [i % 5 for i in range(10)]}
    stories.assign(**hanna, artefact=False).to_parquet(tmp_path / "paired.parquet")
    scores.assign(story_type=hanna["story_type"]).to_parquet(tmp_path / "paired_scores.parquet")
    _, paired, _, _ = summarize([], "paired.parquet", "paired_scores.parquet")
    assert set(paired["pairing"]) == {"prompt"}
    human_vs_a = paired[(paired["measure"] == "no_rate") & (paired["group_b"] == "A")]
    assert human_vs_a["diff"].tolist() == pytest.approx([0.29 - 0.71] * 2)  # with, without
