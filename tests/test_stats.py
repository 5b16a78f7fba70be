"""Welch's t, Hedges' g, group summaries and contrasts, checked against hand-worked values."""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import pytest
from scipy import special
from scipy import stats as sps

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.stats import (
    contrast_effects,
    contrast_summary,
    hedges_g,
    summarize,
    welch_t,
)

# Hand-worked example
#   a = [2, 4, 6]:    n_a = 3, mean_a = 4,   var_a = (4 + 0 + 4)/2 = 4
#   b = [1, 2, 3, 4]: n_b = 4, mean_b = 2.5, var_b = (2.25 + 0.25 + 0.25 + 2.25)/3 = 5/3
A = [2.0, 4.0, 6.0]
B = [1.0, 2.0, 3.0, 4.0]


def test_welch_t_hand_example() -> None:
    # Welch: var_a/n_a = 4/3, var_b/n_b = (5/3)/4 = 5/12; SE² = 4/3 + 5/12 = 1.75
    #   t  = (4 − 2.5)/sqrt(1.75) = 1.5/1.3228757 = 1.1338934
    #   df = 1.75² / ((4/3)²/2 + (5/12)²/3) = 3.0625 / (8/9 + 25/432) = 3.0625/0.9467593
    #      = 3.2347188
    #   p  = 2 · P(T_df > t) = 0.3338237 (two-sided)
    t, df, p = welch_t(A, B)
    assert t == pytest.approx(1.5 / math.sqrt(1.75))
    assert t == pytest.approx(1.1338934, abs=1e-7)
    assert df == pytest.approx(3.0625 / (8 / 9 + 25 / 432))
    assert df == pytest.approx(3.2347188, abs=1e-7)
    assert p == pytest.approx(0.3338237, abs=1e-7)
    # the sign follows a − b
    t_rev, df_rev, p_rev = welch_t(B, A)
    assert (t_rev, df_rev, p_rev) == pytest.approx((-t, df, p))


def test_welch_t_against_written_out_formula() -> None:
    rng = np.random.default_rng(7)
    for n_a, n_b in [(5, 9), (12, 12), (30, 7)]:
        a = rng.normal(0.3, 0.1, n_a)
        b = rng.normal(0.25, 0.2, n_b)
        va, vb = a.var(ddof=1) / n_a, b.var(ddof=1) / n_b
        t_ref = (a.mean() - b.mean()) / math.sqrt(va + vb)
        df_ref = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
        p_ref = 2 * special.stdtr(df_ref, -abs(t_ref))  # Student t CDF, not ttest_ind
        assert welch_t(a, b) == pytest.approx((t_ref, df_ref, p_ref), rel=1e-10)


def test_hedges_g_hand_example() -> None:
    # pooled SD s_p = sqrt((2·4 + 3·5/3)/(3 + 4 − 2)) = sqrt(13/5) = sqrt(2.6) = 1.6124515
    # d  = 1.5/1.6124515 = 0.9302605
    # J  = 1 − 3/(4·7 − 9) = 1 − 3/19 = 16/19 = 0.8421053
    # g  = J·d = 0.7833773
    # SE = sqrt(7/12 + g²/14) = sqrt(0.5833333 + 0.6136799/14) = sqrt(0.6271676) = 0.7919391
    # CI = g ± 1.9599640·SE = 0.7833773 ± 1.5521722 = (−0.7687949, 2.3355495)
    g, low, high = hedges_g(A, B, 0.95)
    assert g == pytest.approx(16 / 19 * 1.5 / math.sqrt(2.6))
    assert g == pytest.approx(0.7833773, abs=1e-7)
    assert low == pytest.approx(-0.7687949, abs=1e-7)
    assert high == pytest.approx(2.3355495, abs=1e-7)
    g_rev, low_rev, high_rev = hedges_g(B, A, 0.95)
    assert (g_rev, low_rev, high_rev) == pytest.approx((-g, -high, -low))
    # a 90% interval is narrower: z = 1.6448536
    g90, low90, high90 = hedges_g(A, B, confidence=0.90)
    assert g90 - low90 == pytest.approx(high90 - g90)
    assert g90 == pytest.approx(g)
    assert high90 - g90 == pytest.approx(1.6448536 * 0.7919391, abs=1e-6)


def test_hedges_g_against_pooled_t_and_exact_correction() -> None:
    # Independent route: Cohen's d = t_pooled · sqrt(1/n_a + 1/n_b) from the equal-variance
    # Student t-test; the exact small-sample correction J = Γ(m/2)/(sqrt(m/2)·Γ((m−1)/2)),
    # m = n_a + n_b − 2, agrees with the approximation used to within 0.1 % here.
    rng = np.random.default_rng(11)
    for n_a, n_b in [(6, 8), (12, 12), (40, 25)]:
        a = rng.normal(0.4, 0.15, n_a)
        b = rng.normal(0.3, 0.15, n_b)
        t_pooled = sps.ttest_ind(a, b, equal_var=True).statistic
        d = t_pooled * math.sqrt(1 / n_a + 1 / n_b)
        m = n_a + n_b - 2
        j_exact = math.exp(special.gammaln(m / 2) - special.gammaln((m - 1) / 2)) / math.sqrt(m / 2)
        g, low, high = hedges_g(a, b, 0.95)
        assert g == pytest.approx(j_exact * d, rel=1e-3)
        se = math.sqrt((n_a + n_b) / (n_a * n_b) + g**2 / (2 * (n_a + n_b)))
        assert (low, high) == pytest.approx((g - 1.959964 * se, g + 1.959964 * se), rel=1e-6)


def test_small_groups_are_rejected_by_the_functions() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        welch_t([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least 2"):
        hedges_g([1.0, 2.0], [3.0], 0.95)


def test_zero_variance_gives_nan() -> None:
    assert all(math.isnan(x) for x in hedges_g([1.0, 1.0], [1.0, 1.0], 0.95))
    assert math.isnan(welch_t([1.0, 1.0], [1.0, 1.0])[0])


def story_table(groups: dict[str, list[float]], *, n_sentences: int = 5) -> pd.DataFrame:
    """Story-level rows for model "m", formulation "topic", history "1"; nll_base = 3 + seq."""
    rows = []
    for story_type, values in groups.items():
        for i, value in enumerate(values):
            rows.append(
                {
                    "story_id": f"{story_type}-{i}",
                    "story_type": story_type,
                    "model": "m",
                    "formulation": "topic",
                    "history": "1",
                    "n_sentences": n_sentences,
                    "seq": value,
                    "nll_base": 3.0 + value,
                    "nll_context": 3.0,
                    "any_truncated": False,
                }
            )
    return pd.DataFrame(rows)


def test_summarize_hand_example(caplog: pytest.LogCaptureFixture) -> None:
    # recalled seq = [0.1, 0.2, 0.3]: mean 0.2, sd 0.1,
    #   CI = 0.2 ± t_{0.975, 2} · 0.1/sqrt(3) = 0.2 ± 4.3026527 · 0.0577350 = 0.2 ± 0.2484138
    # imagined seq = [0.5]: n = 1, sd and CI undefined (NaN)
    # a 1-sentence story is left out with min_sentences = 2
    table = pd.concat(
        [
            story_table({"recalled": [0.1, 0.2, 0.3], "imagined": [0.5]}),
            story_table({"retold": [9.0]}, n_sentences=1),
        ],
        ignore_index=True,
    )
    with caplog.at_level(logging.INFO, logger="storyflow"):
        out = summarize(table, confidence=0.95, min_sentences=2)
    assert "left out 1 of 5 stories with fewer than 2 sentences" in caplog.text
    assert list(out.columns) == [
        "model",
        "formulation",
        "history",
        "story_type",
        "measure",
        "n",
        "mean",
        "sd",
        "ci_low",
        "ci_high",
    ]
    assert len(out) == 6  # 2 story types x 3 measures
    assert "retold" not in set(out["story_type"])
    assert list(out["measure"].iloc[:3]) == ["seq", "nll_base", "nll_context"]
    rec = out[(out.story_type == "recalled") & (out.measure == "seq")].iloc[0]
    assert rec["n"] == 3
    assert rec["mean"] == pytest.approx(0.2)
    assert rec["sd"] == pytest.approx(0.1)
    assert rec["ci_low"] == pytest.approx(0.2 - 0.2484138, abs=1e-7)
    assert rec["ci_high"] == pytest.approx(0.2 + 0.2484138, abs=1e-7)
    base = out[(out.story_type == "recalled") & (out.measure == "nll_base")].iloc[0]
    assert base["mean"] == pytest.approx(3.2)
    img = out[(out.story_type == "imagined") & (out.measure == "seq")].iloc[0]
    assert img["n"] == 1 and img["mean"] == pytest.approx(0.5)
    assert math.isnan(img["sd"]) and math.isnan(img["ci_low"]) and math.isnan(img["ci_high"])


def test_summarize_with_no_story_left_is_a_user_error() -> None:
    with pytest.raises(StoryflowError, match="min_sentences"):
        summarize(story_table({"recalled": [0.1, 0.2]}), confidence=0.95, min_sentences=10)


CONTRASTS = [
    {"name": "imagined_vs_recalled", "a": "imagined", "b": "recalled"},
    {"name": "retold_vs_recalled", "a": "retold", "b": "recalled"},
]


def test_contrast_effects_values() -> None:
    table = story_table({"imagined": A, "recalled": B, "retold": [1.0, 1.5, 2.5]})
    out = contrast_effects(table, CONTRASTS, confidence=0.95, min_sentences=2, min_group_size=2)
    assert len(out) == 6  # 1 model x 1 formulation x 1 history x 2 contrasts x 3 measures
    assert list(out["contrast"]) == ["imagined_vs_recalled"] * 3 + ["retold_vs_recalled"] * 3
    row = out[(out.contrast == "imagined_vs_recalled") & (out.measure == "seq")].iloc[0]
    assert (row["group_a"], row["group_b"], row["n_a"], row["n_b"]) == (
        "imagined",
        "recalled",
        3,
        4,
    )
    assert (row["mean_a"], row["mean_b"]) == pytest.approx((4.0, 2.5))
    # the hand-worked numbers above
    assert (row["t"], row["df"], row["p"]) == pytest.approx((1.1338934, 3.2347188, 0.3338237))
    assert (row["g"], row["g_ci_low"], row["g_ci_high"]) == pytest.approx(
        (0.7833773, -0.7687949, 2.3355495)
    )
    # nll_base = 3 + seq: same differences; nll_context is constant (zero variance) -> NaN
    base = out[(out.contrast == "imagined_vs_recalled") & (out.measure == "nll_base")].iloc[0]
    assert base["g"] == pytest.approx(row["g"])
    context = out[(out.contrast == "imagined_vs_recalled") & (out.measure == "nll_context")]
    assert math.isnan(context["g"].iloc[0])


def test_contrast_with_a_small_group_gives_nan_and_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    table = story_table({"imagined": A, "recalled": B, "retold": [1.0]})
    with caplog.at_level(logging.WARNING, logger="storyflow"):
        out = contrast_effects(table, CONTRASTS, confidence=0.95, min_sentences=2, min_group_size=2)
    assert "contrast retold_vs_recalled" in caplog.text and "fewer than 2 stories" in caplog.text
    small = out[out.contrast == "retold_vs_recalled"]
    assert len(small) == 3
    assert (small["n_a"] == 1).all() and (small["n_b"] == 4).all()
    assert small[["t", "df", "p", "g", "g_ci_low", "g_ci_high"]].isna().all().all()
    assert small["mean_a"].iloc[0] == pytest.approx(1.0)
    assert not out.loc[out.contrast == "imagined_vs_recalled", "g"].isna().iloc[0]


def test_contrast_below_the_minimum_group_size_is_reported_but_not_tested(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """stats.min_group_size: imagined (3) vs recalled (4) is tested at a minimum of 3, not at
    5; the sizes and means stay, the test statistics go (books compare 2 passages with 2)."""
    table = story_table({"imagined": A, "recalled": B, "retold": [1.0, 1.5, 2.5]})
    tested = contrast_effects(table, CONTRASTS, confidence=0.95, min_sentences=2, min_group_size=3)
    assert tested["tested"].all() and tested.loc[tested.measure == "seq", "g"].notna().all()
    with caplog.at_level(logging.WARNING, logger="storyflow"):
        out = contrast_effects(table, CONTRASTS, confidence=0.95, min_sentences=2, min_group_size=5)
    assert "fewer than 5 stories" in caplog.text and "not tested" in caplog.text
    assert not out["tested"].any()
    assert out[["t", "df", "p", "g", "g_ci_low", "g_ci_high"]].isna().all().all()
    seq = out[(out.contrast == "imagined_vs_recalled") & (out.measure == "seq")].iloc[0]
    assert (seq["n_a"], seq["n_b"], seq["mean_a"], seq["mean_b"]) == (3, 4, 4.0, 2.5)


def test_contrast_naming_an_absent_group_is_a_user_error() -> None:
    table = story_table({"imagined": A, "recalled": B})
    with pytest.raises(StoryflowError) as err:
        contrast_effects(table, CONTRASTS, confidence=0.95, min_sentences=2, min_group_size=2)
    message = str(err.value)
    assert "retold_vs_recalled" in message
    assert "story_type ['retold'], absent from the data" in message
    assert "values present: ['imagined', 'recalled']" in message


def test_effects_csv_round_trip_keeps_history_as_text(tmp_path) -> None:
    table = pd.concat(
        [
            story_table({"imagined": A, "recalled": B, "retold": [1.0, 2.0]}).assign(history=h)
            for h in ["1", "2", "10", "full"]
        ],
        ignore_index=True,
    )
    out = contrast_effects(table, CONTRASTS, confidence=0.95, min_sentences=2, min_group_size=2)
    assert list(out["history"].drop_duplicates()) == ["1", "2", "10", "full"]
    out.to_csv(tmp_path / "effects.csv", index=False)
    back = tables.read(tables.EFFECTS, tmp_path / "effects.csv")
    assert list(back["history"].drop_duplicates()) == ["1", "2", "10", "full"]
    pd.testing.assert_frame_equal(back, out, check_dtype=False)


# Book passages: groups are label filters (genre, point of view); passages of one book share
# its document_id. Group a = first-person fiction passages (values A, two books), group b =
# autobiography passages (values B, from books 20, 21, 22, 22).
def passage_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    story = story_table({"fiction-1P": A, "autobiography": B, "fiction-3P": [0.5, 0.7]})
    labels = story[["story_id", "story_type"]].copy()
    labels["genre"] = labels["story_type"].str.replace(r"-\dP$", "", regex=True)
    labels["pov"] = ["1P", "1P", "1P", "1P", "1P", "1P", "1P", "3P", "3P"]
    labels["document_id"] = ["10", "10", "11", "20", "21", "22", "22", "30", "31"]
    return story, labels


BOOK_CONTRASTS = [
    {
        "name": "fic1p_vs_autobiography",
        "a": {"genre": "fiction", "pov": "1P"},
        "b": {"genre": "autobiography"},
        "label_a": "FIC-1P",
    },
    {"name": "fiction_vs_autobiography", "a": {"genre": ["fiction"]}, "b": "autobiography"},
]


def test_label_filter_contrasts_select_by_every_filter_and_count_books() -> None:
    story, labels = passage_tables()
    out = contrast_effects(
        story, BOOK_CONTRASTS, confidence=0.95, min_sentences=2, min_group_size=2, labels=labels
    )
    seq = out[out.measure == "seq"].set_index("contrast")
    first = seq.loc["fic1p_vs_autobiography"]
    # the same numbers as the hand-worked story-type example: a = A, b = B
    assert (first["group_a"], first["group_b"]) == ("FIC-1P", "genre=autobiography")
    assert (first["n_a"], first["n_b"], first["n_docs_a"], first["n_docs_b"]) == (3, 4, 2, 3)
    assert (first["t"], first["g"]) == pytest.approx((1.1338934, 0.7833773))
    assert (first["sd_a"], first["sd_b"]) == pytest.approx((2.0, math.sqrt(5 / 3)))
    # without the pov filter the 3P passages join group a: a = [2, 4, 6, 0.5, 0.7]
    both = seq.loc["fiction_vs_autobiography"]
    assert both["group_a"] == "genre=fiction"
    assert (both["n_a"], both["n_docs_a"]) == (5, 4)
    assert both["mean_a"] == pytest.approx((2 + 4 + 6 + 0.5 + 0.7) / 5)
    assert both["g"] == pytest.approx(hedges_g([2, 4, 6, 0.5, 0.7], B, 0.95)[0])


def test_group_empty_in_the_sample_gives_nan_but_a_typo_is_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    story, labels = passage_tables()
    contrast = [{"name": "c", "a": {"genre": "autobiography", "pov": "3P"}, "b": "fiction-1P"}]
    with caplog.at_level(logging.WARNING, logger="storyflow"):
        out = contrast_effects(
            story, contrast, confidence=0.95, min_sentences=2, min_group_size=2, labels=labels
        )
    assert "no story matches group a (genre=autobiography, pov=3P)" in caplog.text
    assert (out["n_a"] == 0).all() and out["g"].isna().all()
    typo = [{"name": "c", "a": {"genre": "fictoin"}, "b": "fiction-1P"}]
    with pytest.raises(StoryflowError, match=r"genre \['fictoin'\], absent from the data"):
        contrast_effects(
            story, typo, confidence=0.95, min_sentences=2, min_group_size=2, labels=labels
        )
    unknown = [{"name": "c", "a": {"author": "x"}, "b": "fiction-1P"}]
    with pytest.raises(StoryflowError, match="filters on 'author', which the stories do not have"):
        contrast_effects(
            story, unknown, confidence=0.95, min_sentences=2, min_group_size=2, labels=labels
        )
    overlap = [{"name": "c", "a": {"genre": "fiction"}, "b": {"pov": "1P"}}]
    with pytest.raises(StoryflowError, match="3 stories fall in both groups"):
        contrast_effects(
            story, overlap, confidence=0.95, min_sentences=2, min_group_size=2, labels=labels
        )


def test_contrast_summary_averages_g_over_models_and_histories() -> None:
    story, labels = passage_tables()
    # model m2, history 2: group b shifted down by 1 -> a larger g
    shifted = story.assign(model="m2", history="2")
    shifted.loc[shifted.story_type == "autobiography", "seq"] -= 1.0
    table = pd.concat([story, shifted], ignore_index=True)
    effects = contrast_effects(
        table,
        BOOK_CONTRASTS[:1],
        confidence=0.95,
        min_sentences=2,
        min_group_size=2,
        labels=labels,
    )
    summary = contrast_summary(effects)
    row = summary[summary.measure == "seq"].iloc[0]
    g1 = hedges_g(A, B, 0.95)[0]
    g2 = hedges_g(A, [b - 1.0 for b in B], 0.95)[0]
    assert (row["n_models"], row["n_histories"]) == (2, 2)
    assert row["cell_mean_g"] == pytest.approx((g1 + g2) / 2)
    spread = (row["cell_min_g"], row["cell_max_g"], row["share_positive"])
    assert spread == pytest.approx((g1, g2, 1.0))
    assert (row["n_a"], row["n_b"], row["n_docs_a"], row["n_docs_b"]) == (3, 4, 2, 3)


# --- R through rpy2 (storyflow.lmer) ends quietly ---------------------------------------------

_FIT_AND_EXIT = """
import io, logging
import numpy as np, pandas as pd
from storyflow import lmer
from storyflow.errors import StoryflowError

stream = io.StringIO()  # a handler whose stream is closed before exit, as pytest's capture is
logging.basicConfig(level=logging.INFO, stream=stream)
try:
    lmer.check_r()
except StoryflowError:
    print("no R")
    raise SystemExit(0)
rng = np.random.default_rng(0)
story = np.repeat(np.arange(12), 5)
x = rng.normal(size=60)
frame = pd.DataFrame({"story_id": story.astype(str), "x": x,
                      "y": 0.5 * x + rng.normal(size=12)[story] + rng.normal(size=60)})
fit = lmer.fit_lmer(frame, "y ~ x + (1 | story_id)", {"story_id": sorted(set(frame.story_id))})
print("slope", round(float(fit.coefficients.set_index("term").loc["x", "estimate"]), 2))
stream.close()
"""


def test_a_process_that_ran_r_exits_without_a_logging_error() -> None:
    """rpy2 logs "Embedded R ended." from its exit hook; to a closed stream that printed
    "--- Logging error ---" and a traceback at the end of every test run (and rule) that used R."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _FIT_AND_EXIT], capture_output=True, text=True, timeout=300
    )
    if done.stdout.strip() == "no R":
        pytest.skip("R with lme4 and lmerTest not installed")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "slope 0." in done.stdout  # the model was fitted (true slope 0.5)
    assert "Logging error" not in done.stderr and "Embedded R ended" not in done.stderr, (
        done.stderr[-2000:]
    )
