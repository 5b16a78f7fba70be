"""The tension measure (ending forecasting): cuts, no-rates, curve statistics, the judges and
the forecaster (docs/tension.md)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.measures.tension import calibration, compare, curves, cuts, forecast, judges

WORDS10 = "one two three four five six seven eight nine ten"


def test_cuts_keep_pct_window_and_long_sentences() -> None:
    sentences = [WORDS10 + ".", "Short one.", WORDS10 + " more.", WORDS10 + ".", "End."]
    n_tokens = [10, 2, 11, 10, 67]  # 100 tokens
    kept, reason = cuts.story_cuts(sentences, n_tokens, cuts.CutSettings())
    assert reason is None
    # after s0: pct 0.10 (kept); s1: too short; s2: 0.23; s3: 0.33; s4 is the last sentence
    assert kept == [(0, 0.10, 10), (2, 0.23, 23), (3, 0.33, 33)]
    narrow = cuts.CutSettings(min_pct=0.2, max_pct=0.3)
    assert cuts.story_cuts(sentences, n_tokens, narrow)[0] == [(2, 0.23, 23)]


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
    kept, why = cuts.story_cuts(sentences, [5] * len(sentences), cuts.CutSettings())
    assert kept == [] and reason in why


def test_plan_cuts_lists_excluded_stories() -> None:
    stories = pd.DataFrame({"story_id": ["a", "b"], "story_type": ["x", "y"], "text": ["", ""]})
    sentences = pd.DataFrame(
        {"story_id": ["a", "a", "b"], "sentence_idx": [0, 1, 0], "text": [WORDS10, WORDS10, "Hi."]}
    )
    planned, excluded = cuts.plan_cuts(
        stories, sentences, lambda text: len(text.split()), cuts.CutSettings(), "m"
    )
    assert planned[["story_id", "sentence_idx", "pct"]].values.tolist() == [["a", 0, 0.5]]
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


def test_no_rate_counts_misses_over_judged_endings() -> None:
    rates = curves.cut_no_rates(judgments([True, False, False, None]))
    row = rates.iloc[0]
    assert (row.n_samples, row.n_judged, row.n_no, row.n_unjudged) == (4, 3, 2, 1)
    assert row.no_rate == pytest.approx(2 / 3)
    assert math.isnan(curves.cut_no_rates(judgments([None, None])).iloc[0].no_rate)


def test_vertex_angle() -> None:
    assert curves.vertex_angle((0, 0), (0.5, 1), (1, 0)) == pytest.approx(53.130102, abs=1e-5)
    assert curves.vertex_angle((0, 0), (0.5, 0.5), (1, 1)) == pytest.approx(180)


def test_monotone_and_flat_curves_have_no_reversal() -> None:
    pct = np.linspace(0.1, 0.9, 8)
    assert curves.reversals(pct, np.linspace(0, 1, 8)) == []
    assert curves.reversals(pct, np.full(8, 0.5)) == []


def test_zigzag_reversals_are_counted() -> None:
    pct = np.linspace(0.1, 0.9, 7)
    zigzag = [0, 1, 0, 1, 0, 1, 0]
    # unsmoothed (width 1): every interior point reverses, all with sharp angles
    turns = curves.reversals(pct, zigzag, smoothing=1)
    assert [j for j, _ in turns] == [1, 2, 3, 4, 5]
    # on the unit square: neighbours 1/6 apart in x, 1 in y: angle 2·atan(1/6) = 18.9°
    assert all(angle == pytest.approx(2 * math.degrees(math.atan(1 / 6))) for _, angle in turns)
    stats = curves.curve_statistics(pct, zigzag, curves.CurveSettings(smoothing=1))
    assert stats["inflection_rate_30"] == pytest.approx(5 / 7)
    # smoothed over 3 cuts: 1/2, 1/3, 2/3, 1/3, 2/3, 1/3, 1/2 reverses at positions 1..5
    assert [j for j, _ in curves.reversals(pct, zigzag)] == [1, 2, 3, 4, 5]


def test_post_spike_drops_on_a_hand_made_curve() -> None:
    curve = [0.2, 0.8, 0.5, 0.6, 0.1, 0.3, 0.9, 0.4]
    # peaks at 1 (0.8; next 10 cuts' min 0.1), 3 (0.6; min 0.1), 6 (0.9; min 0.4)
    assert curves.post_spike_drops(curve) == pytest.approx([0.7, 0.5, 0.5])
    assert curves.post_spike_drops(curve, window=1) == pytest.approx([0.3, 0.5, 0.5])
    settings = curves.CurveSettings()
    stats = curves.curve_statistics(np.linspace(0.1, 0.95, 8), curve, settings)
    assert stats["retention"] == pytest.approx(1.7 / 3)
    assert stats["late_no_rate"] == pytest.approx(np.mean([0.9, 0.4]))  # pct 0.83, 0.95


def test_short_or_peakless_curves_give_nan() -> None:
    settings = curves.CurveSettings()
    two = curves.curve_statistics([0.2, 0.5], [0.5, 1.0], settings)
    assert two["no_rate"] == 0.75 and math.isnan(two["retention"])
    assert math.isnan(two["inflection_rate_60"])
    rising = curves.curve_statistics([0.2, 0.5, 0.7], [0.1, 0.5, 0.9], settings)
    assert math.isnan(rising["retention"]) and rising["inflection_rate_60"] == 0


def test_invalid_settings_name_the_key() -> None:
    good = {"temperature": 1.2, "top_p": 0.95, "max_tokens": 10, "seed": 1}
    with pytest.raises(StoryflowError, match=r"tension\.k"):
        forecast.check_settings(0, good)
    with pytest.raises(StoryflowError, match=r"tension\.sampling\.temperature"):
        forecast.check_settings(4, {**good, "temperature": 0})
    with pytest.raises(StoryflowError, match=r"tension\.embedding\.threshold"):
        judges.check_threshold(1.5)
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


def test_calibration_fits_on_one_half_and_scores_the_other() -> None:
    cloze = cloze_stories(10)
    # forecasts at 0° (and one empty); right endings at 40° (cos 0.77), wrong at 70° (cos 0.34),
    # except story r0, whose wrong ending is the closer one (10°, cos 0.98)
    angles = {f"right {i}": 40.0 for i in range(10)} | {f"wrong {i}": 70.0 for i in range(10)}
    angles |= {"wrong 0": 10.0, "forecast": 0.0}
    endings = pd.DataFrame(
        {
            "story_id": [f"r{i}" for i in range(10) for _ in range(2)],
            "model": "m",
            "sample": [0, 1] * 10,
            "text": ["forecast", "forecast"] * 9 + ["forecast", " "],
        }
    )
    threshold, table = calibration.calibrate_threshold(endings, cloze, axis_encoder(angles), 3, "e")
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
    # the halves are seeded: the same seed gives the same table, another may split differently
    again = calibration.calibrate_threshold(endings, cloze, axis_encoder(angles), 3, "e")[1]
    pd.testing.assert_frame_equal(table, again)


def test_paired_effects_pair_by_prompt_and_drop_artefacts() -> None:
    rows = []
    for prompt in range(5):
        rows.append((f"Human-{prompt}", "Human", 0.2 + 0.01 * prompt, False))
        rows.append((f"A-{prompt}", "A", 0.5 + 0.02 * prompt, prompt == 0))
    frame = pd.DataFrame(rows, columns=["story_id", "story_type", "no_rate", "artefact"])
    stories = frame.assign(model="m", judge="j", late_no_rate=np.nan, retention=np.nan)
    labels = frame.assign(prompt_id=[i // 2 for i in range(10)])
    effects = compare.paired_effects(stories, labels, k=4, confidence=0.95)
    no_rate = effects[(effects["measure"] == "no_rate") & (effects["group_b"] == "A")]
    kept = no_rate.set_index("artefacts")
    assert (no_rate["contrast"] == "Human vs A").all()
    assert kept.loc["included", "n_a"] == 5 and kept.loc["excluded", "n_a"] == 4
    included = kept.loc["included"]
    # Human - A per prompt: -(0.3 + 0.01 * prompt), mean -0.32, SD 0.0158 (n = 5)
    assert included["diff"] == pytest.approx(included["mean_a"] - included["mean_b"])
    assert included["diff"] == pytest.approx(-0.32)
    half = sps.t.ppf(0.975, 4) * np.std([0.30, 0.31, 0.32, 0.33, 0.34], ddof=1) / math.sqrt(5)
    assert (included["diff_ci_low"], included["diff_ci_high"]) == pytest.approx(
        (-0.32 - half, -0.32 + half)
    )
    assert included["t"] < 0 and included["g"] < 0


def test_figures_draw_the_example_stories_and_every_table(tmp_path) -> None:
    from storyflow.figures import tension as figures

    rows = []
    for sid, group, n in [("a", "x", 3), ("b", "x", 5), ("c", "y", 4)]:
        for cut in range(n):
            rows.append((sid, group, "m", cut, cut, (cut + 1) / (n + 1), "j", 4, 4, cut % 2, 0))
    frame = pd.DataFrame(rows, columns=[c for c in tables.TENSION_CURVES.names if c != "no_rate"])
    rates = tables.TENSION_CURVES.frame(frame.assign(no_rate=frame["n_no"] / frame["n_judged"]))
    assert figures.example_stories(rates) == ["b", "c"]  # the most cuts per group
    stats = curves.story_statistics(rates, curves.CurveSettings())
    groups = compare.group_means(stats, k=4, confidence=0.95)
    figures.plot_example_curves(rates, [tmp_path / "curves.png"], 50)
    figures.plot_tension_by_group(groups, [tmp_path / "groups.png"], 50)
    figures.plot_inflection_rates(stats, [tmp_path / "rates.png", tmp_path / "rates.pdf"], 50)
    for name in ("curves.png", "groups.png", "rates.png", "rates.pdf"):
        assert (tmp_path / name).stat().st_size > 1000
