"""The cost of every language-model stage, estimated before it is spent (storyflow.estimate):
hand-counted requests and tokens for each stage, the time at configured rates, the ceiling."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml

from storyflow import estimate, plan
from storyflow.errors import StoryflowError

TEN = " ".join(["word"] * 10)


def lengths(n_sentences: int = 4) -> pd.DataFrame:
    sentences = pd.DataFrame(
        {"story_id": "a", "sentence_idx": range(n_sentences), "text": [TEN] * n_sentences}
    )
    return estimate.story_lengths(sentences)


TENSION = {
    "block": {"k": 2, "sampling": {"max_tokens": 10},
              "cuts": {"min_pct": 0.1, "max_pct": 0.99, "max_cuts": None, "min_words": 0,
                       "max_story_words": 5000}},
    "plan": {"forecasters": ["f"], "judges": ["embedding", "j"]},
}  # fmt: skip


def test_tension_counts_every_cut_its_prefix_and_the_judges_remainders() -> None:
    # 4 sentences of 10 words: cuts after sentences 1-3 (25, 50, 75% of the story), prefixes of
    # 10 + 20 + 30 words, remainders of 30 + 20 + 10; words x 1.3 = tokens
    cost = estimate.estimate({"c": lengths()}, {"c": {"tension": TENSION}}, {})
    rows = cost.set_index("stage")
    forecast, judge = rows.loc["forecast endings"], rows.loc["judge endings"]
    assert (forecast["requests"], forecast["prompt_tokens"], forecast["generated_tokens"]) == (
        3, 78, 3 * 2 * 10
    )  # fmt: skip
    # K = 2 questions per cut, each the remainder and one ending of <= 10 tokens
    assert (judge["requests"], judge["prompt_tokens"], judge["generated_tokens"]) == (6, 216, 0)
    assert "embedding" not in set(cost["model"])  # no language model
    capped = {**TENSION, "block": {**TENSION["block"], "cuts": {**TENSION["block"]["cuts"],
                                                                "max_cuts": 1}}}  # fmt: skip
    one = estimate.estimate({"c": lengths()}, {"c": {"tension": capped}}, {})
    assert one.set_index("stage").loc["forecast endings", "requests"] == 1


def test_tension_counts_the_cuts_the_stage_keeps() -> None:
    """The estimate selects cuts with the stage's own rule (storyflow.measures.tension.cuts):
    with min_words 10 the first position, which has no preceding sentence, is not kept (2 cuts,
    not 3), and a story over max_story_words has none."""
    cuts = {**TENSION["block"]["cuts"], "min_words": 10}
    strict = {**TENSION, "block": {**TENSION["block"], "cuts": cuts}}
    cost = estimate.estimate({"c": lengths()}, {"c": {"tension": strict}}, {})
    forecast = cost.set_index("stage").loc["forecast endings"]
    assert (forecast["requests"], forecast["prompt_tokens"]) == (2, 1.3 * (20 + 30))
    short = {**TENSION, "block": {**TENSION["block"], "cuts": {**cuts, "max_story_words": 39}}}
    none = estimate.estimate({"c": lengths()}, {"c": {"tension": short}}, {})
    assert none.set_index("stage").loc["forecast endings", "requests"] == 0


def test_time_comes_from_the_rates_and_is_unknown_without_one() -> None:
    rates = {"f": {"prompt": 78.0, "generate": 6.0}}
    cost = estimate.estimate({"c": lengths()}, {"c": {"tension": TENSION}}, rates)
    times = cost.set_index("model")["expected_s"]
    assert times["f"] == pytest.approx(78 / 78 + 60 / 6)  # 1 s of prompt, 10 s of writing
    assert math.isnan(times["j"])  # no rate for the judge
    assert "1 rows without a rate" in estimate.summary(cost)


def test_reader_and_detector_counts() -> None:
    items = {"questions": 3, "controls": 1, "kinds": ["etc"], "wrong_ending": False,
             "ewc_k": [1, 2], "lines": 2}  # fmt: skip
    stages = {"fabula_entropy": {"items": items, "readers": ["r"], "variants": 1}}
    cost = estimate.estimate({"c": lengths()}, {"c": stages}, {}).iloc[0]
    # one story, 2 versions (original, shuffled) x (3 questions + 2 controls)
    assert cost["requests"] == 10 and cost["prompt_tokens"] == int(2 * 20 * 1.3) + 10 * 20
    block = {"min_sentences": 4, "max_words": 100, "nli": {"pairs": "all"},
             "detection": {"format": "closed", "max_tokens": 24, "reasoning_tokens": 512},
             "model_maker": {}}  # fmt: skip
    models = {"detectors": ["d"], "nli": ["n"], "maker": None}
    holes = estimate.estimate(
        {"c": lengths()}, {"c": {"plot_holes": {"block": block, "models": models}}}, {}
    )
    rows = holes.set_index("stage")
    assert rows.loc["detect", "requests"] == 2  # the story and its flawed version
    assert rows.loc["detect", "generated_tokens"] == 2 * 24  # a localization after each yes
    assert rows.loc["nli pairs", "requests"] == 2 * 4 * 3  # every ordered pair, both versions
    paper = {**block, "detection": {**block["detection"], "format": "paper"}}
    free = estimate.estimate(
        {"c": lengths()}, {"c": {"plot_holes": {"block": paper, "models": models}}}, {}
    )
    assert free.set_index("stage").loc["detect", "generated_tokens"] == 2 * 512
    too_long = {**block, "max_words": 39}
    none = estimate.estimate(
        {"c": lengths()}, {"c": {"plot_holes": {"block": too_long, "models": models}}}, {}
    )
    assert none.set_index("stage").loc["detect", "requests"] == 0  # not edited, not shown


def test_the_ceiling_stops_the_run_naming_the_biggest_stage_and_its_keys() -> None:
    rates = {"f": {"prompt": 1e-3, "generate": 1e-3}, "j": {"prompt": 1.0}}
    cost = estimate.estimate({"c": lengths()}, {"c": {"tension": TENSION}}, rates)
    estimate.check_ceiling(cost, None)
    estimate.check_ceiling(cost, 1e6)
    with pytest.raises(StoryflowError, match=r"more than cost.max_hours \(1 h\). Biggest: c "
                       r"forecast endings with f .*tension.k, tension.cuts.max_cuts"):  # fmt: skip
        estimate.check_ceiling(cost, 1)


def test_the_default_config_estimates_every_language_model_stage(default_config) -> None:
    settings = plan.cost.settings(default_config)
    assert settings["hippocorpus"].keys() >= {"tension", "fabula_entropy", "plot_holes"}
    assert settings["rocstories"].keys() == {"fabula_entropy"}
    reader = settings["hippocorpus"]["fabula_entropy"]["readers"]
    assert reader == ["qwen2.5-coder-1.5b-instruct"]
    assert plan.cost.rates(default_config)[reader[0]]["prompt"] > 0


@pytest.mark.slow
def test_the_workflow_logs_the_estimate_and_stops_at_the_ceiling(snakemake, tmp_path) -> None:
    """Rule estimate_lm_cost on the tiny config with tension on (SmolLM2 forecasts): the table
    and the log, then cost.max_hours below the estimate stops the job with the message."""
    change = tmp_path / "tension.yaml"
    change.write_text(yaml.safe_dump({"tension": {"enabled": True, "corpora": ["hippocorpus"]}}))
    snakemake(tmp_path / "run", "--cores", "2", configfiles=[change],
              targets=["results/lm_cost.csv"])  # fmt: skip
    cost = pd.read_csv(tmp_path / "run" / "results" / "lm_cost.csv")
    (forecast,) = cost.itertuples()
    assert (forecast.stage, forecast.model) == ("forecast endings", "smollm2-135m-instruct")
    assert forecast.requests > 0 and forecast.expected_s > 0  # the packaged model has a rate
    log = (tmp_path / "run" / plan.cost.OUT.shared_log("estimate_lm_cost")).read_text()
    assert "language-model stages:" in log and "hippocorpus forecast endings" in log
    ceiling = tmp_path / "ceiling.yaml"
    ceiling.write_text(yaml.safe_dump({"cost": {"max_hours": 1e-4}}))
    stopped = snakemake(tmp_path / "run", "--cores", "2", "--forcerun", "estimate_lm_cost",
                        configfiles=[change, ceiling], targets=["results/lm_cost.csv"],
                        check=False)  # fmt: skip
    assert stopped.returncode != 0 and "more than cost.max_hours (0.0001 h)" in stopped.stdout
    assert "Biggest: hippocorpus forecast endings with smollm2-135m-instruct" in stopped.stdout
    assert "Traceback" not in stopped.stdout
