"""The plot-hole stage end to end on real stories (slow): a tiny run over HIPPOCORPUS, HANNA and a
hand-made FlawedFictions file with SmolLM2, its outputs, and what a change re-runs (dry runs in
the finished run; tests/test_reruns.py reads the plans). The run grows a copy of the run of every
measure (``measures_run``), whose HIPPOCORPUS plot holes it keeps."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import MEASURES_CONFIG, NEW_MODEL
from test_reruns import parse_jobs

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PH_CONFIG = REPO / "tests" / "config" / "plot_holes.yaml"
TINY = yaml.safe_load((REPO / "tests" / "config" / "tiny.yaml").read_text())
DETECTOR = TINY["models"][0]["name"]
CORPORA = ("hippocorpus", "hanna")
TARGETS = [
    *(
        f"results/{corpus}/plot_holes/{name}"
        for corpus in CORPORA
        for name in ("story_measures.parquet", "tables/scores.csv", "figures/ceeval.png")
    ),
    "results/hanna/plot_holes/tables/detection_rates.csv",
    "results/flawedfictions/plot_holes/tables/scores.csv",
    "results/plot_holes/tables/validity.csv",
    *(f"results/{corpus}/plot_holes/tables/left_out.csv" for corpus in CORPORA),
]
#: The jobs that score the detectors' answers again (each corpus's scores and CEEval figure, the
#: detection rates, the benchmark's scores): what a change of scoring or of a verdict re-runs.
RESCORING = Counter(
    {
        **{
            (rule, None, corpus): 1
            for corpus in CORPORA
            for rule in ("score_plot_holes", "plot_ceeval")
        },
        ("compute_detection_rates", None, None): 1,
        ("score_benchmark_plot_holes", None, None): 1,
    }
)
BENCHMARK = [
    {
        "id": "ff-flawed",
        "story": "Anna had long red hair. She walked to the market every morning. The baker "
        "waved at her. She bought two loaves of bread. On the way home she brushed her short "
        "black hair out of her eyes.",
        "cont_error": True,
        "cont_error_expl": "Anna's hair was long and red, later short and black.",
        "cont_error_lines": ["On the way home she brushed her short black hair out of her eyes."],
        "contradicted_lines": ["Anna had long red hair."],
    },
    {
        "id": "ff-clean",
        "story": "Tom owned a small grey boat. He sailed it on the lake each summer. One day "
        "the wind rose. Tom steered his small grey boat back to the shore.",
        "cont_error": False,
        "cont_error_expl": "",
        "cont_error_lines": [],
        "contradicted_lines": [],
    },
]


def change_file(tmp_path: Path, name: str, sections: dict) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(sections))
    return path


@pytest.fixture(scope="module")
def ph_config(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """tests/config/measures.yaml and tests/config/plot_holes.yaml over the tiny config, plus the
    hand-made FlawedFictions file as the benchmark."""
    folder = tmp_path_factory.mktemp("ph_config")
    benchmark = folder / "flawedfictions.jsonl"
    benchmark.write_text("".join(json.dumps(record) + "\n" for record in BENCHMARK))
    extra = change_file(folder, "benchmark.yaml", {"plot_holes": {"benchmark": str(benchmark)}})
    return [MEASURES_CONFIG, PH_CONFIG, extra]


@pytest.fixture(scope="module")
def ph_run(
    snakemake, tmp_path_factory: pytest.TempPathFactory, ph_config, measures_run: Path
) -> Path:
    """A copy of ``measures_run`` grown by HANNA and the benchmark file: its HIPPOCORPUS stories
    are neither edited nor asked again (the settings they depend on are the same), so only
    HANNA's and the file's jobs run, then the checks and tables that pool every corpus."""
    workdir = tmp_path_factory.mktemp("ph_run") / "run"
    shutil.copytree(measures_run, workdir, symlinks=True)
    ran = snakemake(workdir, "--cores", "2", configfiles=ph_config, targets=TARGETS).stdout
    # HIPPOCORPUS's scores and figure are redone: they read the check, which pools HANNA now
    again = [
        job["rule"]
        for job in parse_jobs(ran)
        if (job.get("wc_corpus") == "hippocorpus" or "validation" in job["rule"])
        and job["rule"] not in ("score_plot_holes", "plot_ceeval")
    ]
    assert not again, f"growing the run of every measure re-ran {again}"
    return workdir


def ph_plan(snakemake, workdir: Path, configfiles) -> Counter:
    result = snakemake(workdir, "--dry-run", configfiles=configfiles, targets=TARGETS)
    if "Nothing to be done" in result.stdout:
        return Counter()
    return Counter(
        (job["rule"], job.get("wc_model"), job.get("wc_corpus"))
        for job in parse_jobs(result.stdout)
    )


def test_made_stories_carry_exact_ground_truth(ph_run: Path) -> None:
    made = pd.read_parquet(ph_run / "results/hippocorpus/plot_holes/made/controlled.parquet")
    assert len(made) > 0, "the controlled maker made nothing from the tiny HIPPOCORPUS sample"
    for _, story in made.groupby("story_id"):
        versions = story.set_index("version")
        assert sorted(versions.index) == ["C", "D", "F", "O"]
        assert not versions.loc["O", "has_error"] and versions.loc["F", "has_error"]
        assert not versions.loc["C", "has_error"]
        f, o = versions.loc["F"], versions.loc["O"]
        changed = [
            i + 1
            for i, (a, b) in enumerate(zip(o["sentences"], f["sentences"], strict=True))
            if a != b
        ]
        assert changed == list(f["error_lines"])  # the flaw is exactly the changed sentence
        assert max(f["contr_lines"]) < min(f["error_lines"])  # it contradicts an earlier one
    skipped = pd.read_csv(ph_run / "results/hippocorpus/plot_holes/tables/skipped/controlled.csv")
    stories = pd.read_parquet(ph_run / "results/hippocorpus/corpus/stories.parquet")
    assert set(made["story_id"]) | set(skipped["story_id"]) == set(stories["story_id"])


def test_scores_and_story_measures_cover_every_story(ph_run: Path) -> None:
    for corpus in CORPORA:
        folder = ph_run / "results" / corpus / "plot_holes"
        stories = pd.read_parquet(ph_run / "results" / corpus / "corpus" / "stories.parquet")
        measures = pd.read_parquet(folder / "story_measures.parquet")
        p_error = measures[measures["measure"] == "plot_holes.p_error"]
        assert set(p_error["model"]) == {DETECTOR}
        assert sorted(p_error["story_id"]) == sorted(stories["story_id"].astype(str))
        assert p_error["value"].between(0, 1).all(), f"{corpus}: P(error) NaN or out of range"
        scores = pd.read_csv(folder / "tables/scores.csv")
        if len(pd.read_parquet(folder / "made/controlled.parquet")):
            by = scores.set_index("detector")
            assert {DETECTOR, "baseline:always-no", "baseline:random"} <= set(by.index)
            assert by.loc["baseline:always-no", "ceeval_full"] == 0.5  # balanced O + F
            assert (scores["n"] == 2 * scores["n_flawed"]).all()
            assert (scores["unparseable_policy"] == "wrong").all()
    rates = pd.read_csv(ph_run / "results/hanna/plot_holes/tables/detection_rates.csv")
    # one per LLM of the prompt, and the pooled row of every LLM
    assert len(rates[rates["detector"] == DETECTOR]) == 7
    assert rates["group"].tolist().count("all LLMs") == len(rates) // 7
    assert rates["rate_human"].isin([0.0, 1.0]).all()  # one prompt: one human story
    # one prompt is below stats.min_group_size: no intervals; the verdict is carried
    # below stats.min_group_size prompts the difference is untested; the shares keep their
    # Wilson intervals, inside [0, 1]
    assert rates["small_group"].all() and rates["ci_low"].isna().all()
    shares = rates[["rate_human_ci_low", "rate_human_ci_high"]]
    assert shares.notna().all().all() and shares.stack().between(0, 1).all()
    # SmolLM2 says "no" to everything, and 4 + 2 pairs are too few: it fails
    assert rates["validity"].str.match(r"failed: .*pairs").all() and not rates["best"].any()
    assert (rates["valid"] == False).all()  # noqa: E712 (read from CSV)


def test_the_validity_check_runs_on_the_pool_and_labels_the_results(ph_run: Path) -> None:
    pool = pd.read_parquet(ph_run / "results/plot_holes/validation/made.parquet")
    hippo = pd.read_parquet(ph_run / "results/hippocorpus/corpus/stories.parquet")
    assert pool["story_id"].nunique() == 4 and set(pool["version"]) == {"O", "F"}
    assert not set(pool["story_id"]) & set(hippo["story_id"])  # outside the analysed sample
    assert (pool["original"].str.split().str.len() <= 200).all()
    check = pd.read_csv(ph_run / "results/plot_holes/tables/validity.csv")
    assert set(zip(check["role"], check["model"], strict=True)) == {
        ("detector", DETECTOR),
        ("surprisal", DETECTOR),
    }
    assert set(check["check"]) == {"auroc", "ceeval_minus_always_no", "pairs"}
    pairs = check.set_index(["role", "check"]).loc[("detector", "pairs")]
    made = sum(
        pd.read_parquet(ph_run / f"results/{c}/plot_holes/made/controlled.parquet")[
            "story_id"
        ].nunique()
        for c in CORPORA
    )
    assert pairs["value"] == pairs["n"] == 4 + made and not pairs["passed"]  # < 50 pairs
    assert "controlled pairs: validation 4, hippocorpus " in pairs["detail"]
    auroc = check.set_index(["role", "check"]).loc[("detector", "auroc")]
    assert 0 <= auroc["ci_low"] <= auroc["value"] <= auroc["ci_high"] <= 1
    for corpus in CORPORA:
        scores = pd.read_csv(ph_run / f"results/{corpus}/plot_holes/tables/scores.csv")
        if scores.empty:
            continue
        by = scores.set_index("detector")
        assert by.loc[DETECTOR, "validity"].startswith("failed: ")
        assert by.loc[DETECTOR, "validity"].endswith("pairs")
        assert by.loc["baseline:always-no", "validity"].startswith("not checked")
        left = pd.read_csv(ph_run / f"results/{corpus}/plot_holes/tables/left_out.csv")
        assert left.empty and (scores["n_left_out"] == 0).all()  # every story fits 2,048


def test_benchmark_file_is_detected_and_scored(ph_run: Path) -> None:
    folder = ph_run / "results/flawedfictions/plot_holes"
    made = pd.read_parquet(folder / "made/flawedfictions.parquet").set_index("story_id")
    assert list(made.loc["ff-flawed", "error_lines"]) == [5]
    assert list(made.loc["ff-flawed", "contr_lines"]) == [1]
    scores = pd.read_csv(folder / "tables/scores.csv").set_index("detector")
    assert set(scores.index) == {DETECTOR, "baseline:always-no", "baseline:random"}
    assert (scores["n"] == 2).all() and (scores["verification"] == "published").all()
    assert scores.loc["baseline:always-no", "ceeval_full"] == 0.5
    answers = pd.read_parquet(folder / "answers.parquet")
    assert len(answers[answers["detector"] == DETECTOR]) == 2


def test_adding_a_detector_runs_only_its_jobs(
    snakemake, ph_run: Path, ph_config, tmp_path: Path
) -> None:
    assert ph_plan(snakemake, ph_run, ph_config) == Counter()
    new = NEW_MODEL["name"]
    change = change_file(
        tmp_path,
        "detector.yaml",
        {
            "models": [*TINY["models"], NEW_MODEL],
            "plot_holes": {"detectors": [DETECTOR, new]},
        },
    )
    jobs = ph_plan(snakemake, ph_run, [*ph_config, change])
    expected = RESCORING + Counter({("materialize_model", new, None): 1})
    for corpus in CORPORA:
        expected[("detect_plot_holes", new, corpus)] += 1  # surprisal: the role's models only
    expected[("detect_plot_hole_validation", new, None)] += 1
    expected[("check_plot_hole_detectors", None, None)] += 1
    expected[("detect_benchmark_plot_holes", new, None)] += 1
    assert jobs == expected


def test_changing_the_unparseable_policy_rescores_without_asking_again(
    snakemake, ph_run: Path, ph_config, tmp_path: Path
) -> None:
    change = change_file(
        tmp_path, "policy.yaml", {"plot_holes": {"detection": {"unparseable": "exclude"}}}
    )
    jobs = ph_plan(snakemake, ph_run, [*ph_config, change])
    assert jobs == RESCORING


def test_configuring_an_nli_model_adds_only_its_jobs(
    snakemake, ph_run: Path, ph_config, tmp_path: Path
) -> None:
    change = change_file(tmp_path, "nli.yaml", {"plot_holes": {"nli": {"models": [DETECTOR]}}})
    jobs = ph_plan(snakemake, ph_run, [*ph_config, change])
    assert jobs == RESCORING + Counter(
        {
            ("detect_plot_holes_nli", DETECTOR, "hippocorpus"): 1,
            ("detect_plot_holes_nli", DETECTOR, "hanna"): 1,
            ("detect_plot_hole_validation_nli", DETECTOR, None): 1,
            ("check_plot_hole_detectors", None, None): 1,
            ("detect_benchmark_plot_holes_nli", DETECTOR, None): 1,
        }
    )


def test_changing_a_validity_threshold_rechecks_and_relabels_without_asking_again(
    snakemake, ph_run: Path, ph_config, tmp_path: Path
) -> None:
    change = change_file(tmp_path, "auroc.yaml", {"validity": {"detector": {"min_auroc": 0.6}}})
    jobs = ph_plan(snakemake, ph_run, [*ph_config, change])
    assert jobs == RESCORING + Counter({("check_plot_hole_detectors", None, None): 1})
    pool = change_file(tmp_path, "pool.yaml", {"plot_holes": {"validation": {"pairs": 7}}})
    jobs = ph_plan(snakemake, ph_run, [*ph_config, pool])
    assert jobs[("make_plot_hole_validation", None, None)] == 1
    assert jobs[("detect_plot_hole_validation", DETECTOR, None)] == 1
    assert not any(rule == "detect_plot_holes" for rule, _, _ in jobs)  # the corpora's answers stay
