"""The workflow on a real SLURM scheduler through workflow/profiles/slurm (issue 6).

tools/slurm/start.sh installs (apt-get), configures and starts a one-node SLURM cluster on this
machine (root needed; skipped otherwise), and tools/slurm/stop.sh stops it again at the end when
these tests started it. The tiny config's effect sizes then run through ``--profile
workflow/profiles/slurm``, every job an sbatch job, and the tables they write must equal those
of the local run (``tiny_run``). The effect sizes are the chain of every stage that runs a model
(sampling, splitting, planning, the NLL shards, gathering, sequentiality); the rules after it
(fits, figures, pages) are scheduled the same way, and each SLURM round costs about 12 s of
polling (docs/cluster.md gives the times). On the way, one NLL job is cancelled with scancel;
it, and a job that fails, are reported with their SLURM log and submitted again per the
profile's ``retries``.

Run just these:  .venv/bin/pytest -m slurm -s   (docs/cluster.md gives the times)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest
import yaml
from conftest import real_slurm_conf

if TYPE_CHECKING:
    from conftest import Snakemake

pytestmark = [pytest.mark.slow, pytest.mark.slurm]

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "workflow" / "profiles" / "slurm"
START, STOP = REPO / "tools/slurm/start.sh", REPO / "tools/slurm/stop.sh"
SITE = yaml.safe_load((PROFILE / "config.yaml").read_text())["__variables__"]
# The profile polls at a pace fit for a shared cluster; a test has the scheduler to itself. The
# plugin (2.8.0) checks this many seconds after a check that saw a job end, and 10 s later each
# time one sees none: a job here takes 5 s or more, so 1 s puts the second check 12 s after a
# job's start where 2 s put it at 14 (the tiny run's chain of about a dozen jobs).
FAST_POLLING = (
    "--slurm-init-seconds-before-status-checks=1",
    "--seconds-between-status-checks=1",
)
# Rules that never go to sbatch: the target rule and the `localrules` of common.smk.
LOCAL_RULES = {"all", "download_hippocorpus", "materialize_model"}
SUBMITTED = re.compile(
    r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: (\S+/rule_(\w+)/\S*\.log)\)"
)


def cluster_is_up() -> bool:
    if not shutil.which("sinfo"):
        return False
    state = subprocess.run(
        ["sinfo", "--noheader", "--format=%T"], capture_output=True, text=True, check=False
    )
    return state.returncode == 0 and bool(
        re.search(r"^(idle|mixed|allocated)$", state.stdout, re.M)
    )


@pytest.fixture(scope="module")
def slurm_cluster() -> Iterator[None]:
    if os.geteuid() != 0:
        pytest.skip("needs root: tools/slurm/start.sh installs and starts the SLURM daemons")
    if not (shutil.which("apt-get") or shutil.which("slurmctld")):
        pytest.skip("no apt-get to install SLURM (Debian/Ubuntu packages) and no SLURM installed")
    with real_slurm_conf():  # not the session's quick copy (conftest.quick_slurm_clients)
        was_up = cluster_is_up()
        started = subprocess.run(
            [START], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200
        )
        assert started.returncode == 0, f"tools/slurm/start.sh failed:\n{started.stdout[-4000:]}"
        yield
        if not was_up:
            subprocess.run([STOP], check=False, timeout=300)


def job_stats(output: str) -> dict[str, int]:
    """Rule -> number of jobs, from the "Job stats" table Snakemake prints before it starts."""
    table = output.split("Job stats:", 1)[1].split("\ntotal", 1)[0]
    return {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", table, re.M)}


def submissions(output: str) -> list[tuple[str, str, Path, str]]:
    """(Snakemake job id, SLURM job id, SLURM log, rule) of every sbatch submission."""
    return [(job, slurm, Path(log), rule) for job, slurm, log, rule in SUBMITTED.findall(output)]


def sacct(job_ids: list[str], fields: str) -> dict[str, dict[str, str]]:
    command = ["sacct", "-X", "--noheader", "--parsable2", f"--format=JobIDRaw,{fields}"]
    out = subprocess.run(
        [*command, "--jobs", ",".join(job_ids)], capture_output=True, text=True, check=True
    ).stdout
    names = fields.split(",")
    return {
        line.split("|")[0]: dict(zip(names, line.split("|")[1:], strict=True))
        for line in out.splitlines()
    }


def result_tables(workdir: Path) -> dict[str, pd.DataFrame]:
    tables = {}
    for path in sorted((workdir / "results").rglob("*")):
        if path.suffix == ".parquet":
            tables[str(path.relative_to(workdir))] = pd.read_parquet(path)
        elif path.suffix == ".csv":
            tables[str(path.relative_to(workdir))] = pd.read_csv(path)
    return tables


def squeue_state(job_id: str) -> str:
    return subprocess.run(
        ["squeue", "--noheader", "--format=%T", "--jobs", job_id], capture_output=True, text=True
    ).stdout.strip()


def cancel_first_job_of(rule: str, log: Path, process: subprocess.Popen, timeout: float) -> str:
    """scancel the first SLURM job of ``rule`` a few seconds after it starts; returns its id."""
    deadline = time.monotonic() + timeout
    while not (jobs := [j for j in submissions(log.read_text()) if j[3] == rule]):
        assert process.poll() is None, f"snakemake ended early:\n{log.read_text()[-4000:]}"
        assert time.monotonic() < deadline, f"no {rule} job submitted in {timeout} s"
        time.sleep(0.5)
    job_id = jobs[0][1]
    while squeue_state(job_id) != "RUNNING":
        assert time.monotonic() < deadline, f"SLURM job {job_id} did not start in {timeout} s"
        time.sleep(0.5)
    time.sleep(2)  # running: the jobstep has started Snakemake, which starts the script
    subprocess.run(["scancel", job_id], check=True)
    return job_id


def test_slurm_run_equals_local_run(
    snakemake: Snakemake, tiny_run: Path, slurm_cluster: None, tmp_path: Path
) -> None:
    """The tiny config's effect sizes through the SLURM profile, one NLL job cancelled
    (scancel) on the way; every table it writes equals the local run's."""
    from storyflow.plan.layout import fill
    from storyflow.plan.sequentiality import EFFECT_SIZES

    workdir, log_path = tmp_path / "slurm", tmp_path / "snakemake.log"
    target = fill(EFFECT_SIZES, corpus="hippocorpus")
    start = time.monotonic()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            snakemake.command(workdir, "--profile", str(PROFILE), *FAST_POLLING, targets=[target]),
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        cancelled = cancel_first_job_of("score_nll_shard", log_path, process, timeout=1200)
        assert process.wait(timeout=3000) == 0, log_path.read_text()[-6000:]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    wall = time.monotonic() - start
    output = log_path.read_text()
    jobs = submissions(output)

    # the cancelled job was reported with its SLURM log and submitted again (retries: 1)
    cancelled_job, _, cancelled_log, _ = next(j for j in jobs if j[1] == cancelled)
    assert f"SLURM-job '{cancelled}' failed, SLURM status is: 'CANCELLED'" in output
    assert re.search(rf"log: .*{re.escape(str(cancelled_log))} \(check log file", output)
    assert "CANCELLED AT" in cancelled_log.read_text()
    assert [j[0] for j in jobs].count(cancelled_job) == 2

    # every job of a non-local rule went through sbatch, with the profile's resources; the local
    # rules (`all`, fetching data and models: common.smk) ran in the Snakemake process itself
    planned = job_stats(output)
    sbatched = {rule: n for rule, n in planned.items() if rule not in LOCAL_RULES}
    assert "materialize_model" in planned and "score_nll_shard" in sbatched
    assert "localrule materialize_model:" in output
    assert sorted(j[3] for j in jobs if j[1] != cancelled) == sorted(
        rule for rule, n in sbatched.items() for _ in range(n)
    )
    assert len(jobs) == sum(sbatched.values()) + 1  # the cancelled job twice
    accounting = sacct([j[1] for j in jobs], "State,Partition,Account,AllocTRES,Timelimit")
    for _, slurm, log, rule in jobs:
        job = accounting[slurm]
        assert job["State"].split()[0] == ("CANCELLED" if slurm == cancelled else "COMPLETED")
        assert (job["Partition"], job["Account"]) == (SITE["partition"], SITE["account"])
        # the tiny config's model runs on the CPU (device.n_gpu_layers 0): no job asks for a GPU
        assert "gres/gpu" not in job["AllocTRES"], (rule, job["AllocTRES"])
        assert log.is_file()  # slurm-keep-successful-logs
    # an NLL shard asks for 4 hours, and the cancelled one, resubmitted, for twice that
    nll_jobs = [j for j in jobs if j[3] == "score_nll_shard"]
    limits = [accounting[slurm]["Timelimit"] for _, slurm, _, _ in nll_jobs]
    retried = [j for j in nll_jobs if j[0] == cancelled_job][1][1]
    assert accounting[retried]["Timelimit"] == "08:00:00"
    assert sorted(limits) == ["04:00:00"] * (len(limits) - 1) + ["08:00:00"]

    local, remote = result_tables(tiny_run), result_tables(workdir)
    assert remote.keys() <= local.keys()
    assert any("/nll/" in name for name in remote) and target in remote
    exact = []
    for name, table in remote.items():
        pd.testing.assert_frame_equal(table, local[name], check_exact=False, rtol=1e-9, atol=1e-12)
        exact.append(table.equals(local[name]))
    print(
        f"\nSLURM run of the tiny config's effect sizes: {sum(sbatched.values())} jobs through "
        f"sbatch (+1 resubmission of the cancelled one), {wall:.0f} s wall time; {sum(exact)} of "
        f"{len(exact)} result tables bit-identical to the local run"
    )


def test_failed_job_is_reported_with_its_slurm_log_and_retried(
    snakemake: Snakemake, slurm_cluster: None, tmp_path: Path
) -> None:
    """A job that fails on the cluster (a corpus CSV without memType) is reported and retried."""
    mirror = tmp_path / "mirror"
    broken = mirror / "hippocorpus" / "hippocorpus.csv"
    broken.parent.mkdir(parents=True)
    broken.write_text("AssignmentId,story,summary\nA1,I went out. It rained.,Rain\n")
    command = snakemake.command(
        tmp_path / "run",
        "--profile",
        str(PROFILE),
        *FAST_POLLING,
        targets=["results/hippocorpus/corpus/stories.parquet"],
    )
    command[command.index("--config") + 1] = "data=" + json.dumps({"mirror": str(mirror)})
    result = subprocess.run(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900
    )
    assert result.returncode != 0
    jobs = submissions(result.stdout)
    retries = yaml.safe_load((PROFILE / "config.yaml").read_text())["retries"]
    assert len(jobs) == 1 + retries, result.stdout[-4000:]  # the first attempt and each retry
    for _, slurm, log, rule in jobs:
        assert rule == "sample_stories"
        assert f"SLURM-job '{slurm}' failed, SLURM status is: 'FAILED'" in result.stdout
        assert re.search(rf"log: .*{re.escape(str(log))} \(check log file", result.stdout)
        # the job's SLURM log holds storyflow's one-paragraph message, not a traceback
        text = log.read_text()
        assert f"storyflow: error in rule sample_stories: {broken}" in text
        assert "memType" in text and "Traceback" not in text
