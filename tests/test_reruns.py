"""Partial re-runs and resuming (issue 6): what Snakemake plans after a change to a finished run.

Each plan test changes one thing against the finished run of the tiny config (fixture
``tiny_run``) and compares the dry-run plan (``snakemake -n``) with exactly the jobs that depend on
the change: rules are listed per scenario below, with the model wildcard of per-model jobs. Rules
of optional stages (covariates, regression) count only when the tiny config switches them on; a
rule this file does not know fails the tests, so that whoever adds one decides where it belongs.

These plans hold because every config value a rule uses reaches it through ``params:`` or an
input file, and Snakemake re-runs a job whose params, input set, code or input files changed.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from conftest import NEW_MODEL

if TYPE_CHECKING:
    from conftest import Snakemake

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TINY_CONFIG = REPO / "tests" / "config" / "tiny.yaml"

TINY = yaml.safe_load(TINY_CONFIG.read_text())
MODEL = TINY["models"][0]["name"]
SHARDS = TINY.get("nll", {}).get("shards", 4)  # the schema's default

# Rules by what they depend on. A job is (rule, model wildcard or None).
PER_MODEL_NLL = (
    ["plan_nll"]
    + ["score_nll_shard"] * SHARDS
    + ["gather_nll", "compute_sequentiality", "export_sequentiality_scores"]
)
ALL_MODELS = [
    "estimate_nll_time",
    "summarize_sequentiality",
    "compute_effect_sizes",
    "fit_regressions",
    "gather_validity",  # the sequentiality contrasts' group sizes come from the effect sizes
    "compare_with_paper",  # Fiction Flows' tables beside ours, from every model's stories
    "answer_contrasts",  # each contrast's answer, from every model's stories and NLL plan
    "write_contrast_methods",  # the methods and results sentences, from the answers
]
#: What lists every model (the model provenance table): a new model re-runs it, a setting does not.
MODEL_LIST = ["record_model_provenance"]
#: The run record (results/run.csv): only a new version of storyflow or of a recorded library
#: re-runs it (its params), so no scenario here does.
VERSIONS = ["record_run"]
FIGURES = [
    "plot_sequentiality",
    "plot_effect_sizes",
    "plot_contrast_sequentiality",
    "plot_regression_coefficients",
    "plot_replication",
    "write_replication_page",  # the paper's page holds its figure
    "plot_contrast_answers",
    "write_contrast_page",  # the answers' page holds their figure
]
PER_CORPUS_TEXT = ["sample_stories", "split_sentences", "compute_covariates"]
KNOWN_RULES = {
    "download_hippocorpus",
    "materialize_model",
    "all",
    *PER_MODEL_NLL,
    *ALL_MODELS,
    *MODEL_LIST,
    *VERSIONS,
    *FIGURES,
    *PER_CORPUS_TEXT,
}

Job = tuple[str, str | None]
JOB_HEADER = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")


def parse_jobs(output: str) -> list[dict[str, str]]:
    """Jobs that Snakemake printed (dry-run plan or run log): rule, wildcards, reason."""
    jobs: list[dict[str, str]] = []
    for line in output.splitlines():
        header = JOB_HEADER.match(line)
        if header:
            jobs.append({"rule": header.group(1)})
        elif jobs and line.startswith("    ") and ": " in line:
            key, _, value = line.strip().partition(": ")
            jobs[-1].setdefault(key, value)
    for job in jobs:
        pairs = (item.split("=", 1) for item in job.get("wildcards", "").split(", ") if item)
        job.update({f"wc_{key}": value for key, value in pairs})
    return jobs


def plan(snakemake: Snakemake, workdir: Path, *args: str, configfiles=()) -> list[dict[str, str]]:
    result = snakemake(workdir, "--dry-run", *args, configfiles=configfiles)
    if "Nothing to be done" in result.stdout:
        return []
    jobs = parse_jobs(result.stdout)
    assert jobs, f"no jobs parsed from the dry run:\n{result.stdout[-3000:]}"
    return jobs


def as_counter(jobs: Iterable[dict[str, str]]) -> Counter[Job]:
    return Counter((job["rule"], job.get("wc_model")) for job in jobs)


@pytest.fixture(scope="module")
def workflow_rules(snakemake: Snakemake, tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Rules of a from-scratch plan of the tiny config (optional stages as the config sets them)."""
    rules = {job["rule"] for job in plan(snakemake, tmp_path_factory.mktemp("empty"))}
    unknown = rules - KNOWN_RULES
    assert not unknown, (
        f"rules {sorted(unknown)} are new to tests/test_reruns.py: add them to the scenario lists "
        "(which changes must re-run them?)"
    )
    return rules


def expected(rules: set[str], model: str | None, *groups: tuple[list[str], bool]) -> Counter[Job]:
    """Expected plan: each group's rules (per-model ones with ``model``), kept if in ``rules``."""
    jobs: Counter[Job] = Counter({("all", None): 1})
    for names, per_model in groups:
        jobs.update((name, model if per_model else None) for name in names if name in rules)
    return jobs


def config_file(tmp_path: Path, **sections) -> Path:
    path = tmp_path / "change.yaml"
    path.write_text(yaml.safe_dump(sections))
    return path


def reasons(jobs: list[dict[str, str]], rule: str) -> set[str]:
    return {job.get("reason", "") for job in jobs if job["rule"] == rule}


def test_finished_run_has_nothing_to_do(snakemake: Snakemake, tiny_run: Path) -> None:
    assert plan(snakemake, tiny_run) == []


def test_adding_a_model_schedules_only_that_model_and_what_combines_models(
    snakemake: Snakemake, tiny_run: Path, tmp_path: Path, workflow_rules: set[str]
) -> None:
    change = config_file(tmp_path, models=[*TINY["models"], NEW_MODEL])
    jobs = plan(snakemake, tiny_run, configfiles=[change])
    new = NEW_MODEL["name"]
    assert as_counter(jobs) == expected(
        workflow_rules,
        new,
        (["materialize_model", *PER_MODEL_NLL], True),
        (ALL_MODELS + MODEL_LIST + FIGURES, False),
    )
    shards = sorted(job["wc_shard"] for job in jobs if job["rule"] == "score_nll_shard")
    assert shards == [f"{k:03d}" for k in range(SHARDS)]
    assert all("input files has changed" in r for r in reasons(jobs, "summarize_sequentiality"))


def test_changing_a_plotting_option_re_renders_figures_only(
    snakemake: Snakemake, tiny_run: Path, tmp_path: Path, workflow_rules: set[str]
) -> None:
    dpi = TINY.get("figures", {}).get("dpi", 200) + 1
    jobs = plan(snakemake, tiny_run, configfiles=[config_file(tmp_path, figures={"dpi": dpi})])
    assert as_counter(jobs) == expected(workflow_rules, None, (FIGURES, False))
    assert all("Params have changed" in r for r in reasons(jobs, "plot_sequentiality"))


def test_changing_history_sizes_re_runs_nll_for_every_model(
    snakemake: Snakemake, tiny_run: Path, tmp_path: Path, workflow_rules: set[str]
) -> None:
    max_history = TINY.get("nll", {}).get("max_history", 9) + 1
    change = config_file(tmp_path, nll={"max_history": max_history})
    jobs = plan(snakemake, tiny_run, configfiles=[change])
    assert as_counter(jobs) == expected(
        workflow_rules, MODEL, (PER_MODEL_NLL, True), (ALL_MODELS + FIGURES, False)
    )
    assert all("Params have changed" in r for r in reasons(jobs, "plan_nll"))
    # a shard re-runs for its own params and for the new plan, whichever Snakemake names first
    assert all(
        "Params have changed" in r or "updated by another job" in r
        for r in reasons(jobs, "score_nll_shard")
    )


def test_changing_the_estimate_rate_re_prices_and_scores_nothing(
    snakemake: Snakemake, tiny_run: Path, tmp_path: Path
) -> None:
    """The NLL rate prices the time estimate and the hours that would decide an inconclusive
    finding (each model at its own rate: docs/replication.md, "Cost"): those rules re-run,
    with what reads them; no sampling, splitting or scoring does."""
    change = config_file(tmp_path, nll={"tokens_per_second": 123.0})
    jobs = plan(snakemake, tiny_run, configfiles=[change])
    rules = {rule for rule, _ in as_counter(jobs)}
    assert "estimate_nll_time" in rules
    changed = {
        rule for rule in rules if any("Params have changed" in r for r in reasons(jobs, rule))
    }
    assert changed <= {"estimate_nll_time", "compare_with_paper", "answer_contrasts"}
    assert not rules & {*PER_CORPUS_TEXT, *PER_MODEL_NLL}


def test_changing_the_sample_seed_re_runs_everything_downstream_of_sampling(
    snakemake: Snakemake, tiny_run: Path, tmp_path: Path, workflow_rules: set[str]
) -> None:
    sample = {**TINY["hippocorpus"]["sample"]}
    sample["seed"] = sample.get("seed", 2022) + 1
    change = config_file(tmp_path, hippocorpus={"sample": sample})
    jobs = plan(snakemake, tiny_run, configfiles=[change])
    assert as_counter(jobs) == expected(
        workflow_rules,
        MODEL,
        (PER_CORPUS_TEXT, False),
        (PER_MODEL_NLL, True),
        (ALL_MODELS + FIGURES, False),
    )
    assert all("Params have changed" in r for r in reasons(jobs, "sample_stories"))


# --- resuming a killed run -------------------------------------------------------------------


def shard_paths(workdir: Path) -> list[Path]:
    return sorted(
        (workdir / "results/hippocorpus/sequentiality/nll" / MODEL).glob("shard-*.parquet")
    )


def wait_until(condition: Callable[[], bool], timeout: float, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            pytest.fail(f"snakemake ended (exit {process.returncode}) before the condition held")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s")
        time.sleep(0.5)


def kill_group(process: subprocess.Popen, grace: float = 30) -> None:
    """SIGTERM to the process group (Snakemake and its job), SIGKILL after ``grace`` seconds."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_killed_run_resumes_without_recomputing_finished_shards(
    snakemake: Snakemake, tmp_path: Path
) -> None:
    """The tiny config at one story per type in three shards, one story each (the NLL is most
    of a run: 56 s for the whole run here, where two stories per type took 82 s)."""
    workdir = tmp_path / "run"
    first_log = tmp_path / "first.log"
    shards = 3
    smaller = config_file(
        tmp_path, hippocorpus={"sample": {"per_type": 1, "seed": 7}}, nll={"shards": shards}
    )

    def one_shard_done_and_another_running() -> bool:
        jobs = parse_jobs(first_log.read_text())
        started = sum(job["rule"] == "score_nll_shard" for job in jobs)
        done = first_log.read_text().count("(Rule: score_nll_shard)")
        return done >= 1 and started > done

    # --cores 1: one shard at a time, so the kill lands between finished and unstarted shards.
    with first_log.open("w") as log:
        process = subprocess.Popen(
            snakemake.command(workdir, "--cores", "1", configfiles=[smaller]),
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so the job dies with it
        )
    try:
        wait_until(one_shard_done_and_another_running, 900, process)
        time.sleep(2)  # the next shard is computing
    finally:
        if process.poll() is None:
            kill_group(process)
    # shard id ("000") -> (inode, mtime) of the shards finished before the kill
    finished = {
        path.stem.removeprefix("shard-"): (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in shard_paths(workdir)
    }
    assert 1 <= len(finished) < shards, f"finished shards at the kill: {sorted(finished)}"

    resume_plan = plan(snakemake, workdir, "--rerun-incomplete", configfiles=[smaller])
    planned = {job["wc_shard"] for job in resume_plan if job["rule"] == "score_nll_shard"}
    assert planned == {f"{k:03d}" for k in range(shards)} - finished.keys()

    result = snakemake(workdir, "--cores", "2", "--rerun-incomplete", configfiles=[smaller])
    rerun = {job["wc_shard"] for job in parse_jobs(result.stdout) if "wc_shard" in job}
    assert rerun == planned
    after = {
        path.stem.removeprefix("shard-"): (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in shard_paths(workdir)
    }
    assert {shard: after[shard] for shard in finished} == finished  # not rewritten
    assert (workdir / "results/hippocorpus/corpus/tables/sample_counts.csv").is_file()
    for table in ("sequentiality_by_type", "effect_sizes"):
        assert (workdir / f"results/hippocorpus/sequentiality/tables/{table}.csv").is_file()
    for figure in ("sequentiality_by_history", "effect_sizes"):
        assert (workdir / f"results/hippocorpus/sequentiality/figures/{figure}.png").is_file()
    assert plan(snakemake, workdir, configfiles=[smaller]) == []


def test_materializing_a_model_elsewhere_keeps_a_finished_run_up_to_date(
    snakemake: Snakemake, tiny_run: Path, tmp_path: Path
) -> None:
    """Two studies on one machine share the installed model packages: making the model file of
    one must not make the other's NLL look outdated (Snakemake touches every output it makes)."""
    snakemake(tmp_path / "other", "--cores", "1", targets=[f"resources/models/{MODEL}.gguf"])
    assert plan(snakemake, tiny_run) == []
