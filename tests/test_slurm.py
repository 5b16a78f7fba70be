"""The workflow on a real SLURM scheduler through workflow/profiles/slurm (issue 6).

tools/slurm/start.sh installs (apt-get), configures and starts a one-node SLURM cluster on this
machine (root needed; skipped otherwise), and tools/slurm/stop.sh stops it again at the end when
these tests started it. The tiny config then runs through ``--profile workflow/profiles/slurm``,
every job an sbatch job, and its result tables must equal those of the local run (``tiny_run``).
A job that fails, and one cancelled with scancel, are reported with their SLURM log and
re-submitted per the profile's ``retries``.

Run just these:  .venv/bin/pytest -m slurm -s   (docs/cluster.md gives the times)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest
import yaml

if TYPE_CHECKING:
    from conftest import Snakemake

pytestmark = [pytest.mark.slow, pytest.mark.slurm]

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "workflow" / "profiles" / "slurm"
START, STOP = REPO / "tools/slurm/start.sh", REPO / "tools/slurm/stop.sh"
SITE = yaml.safe_load((PROFILE / "config.yaml").read_text())["__variables__"]
TINY = yaml.safe_load((REPO / "tests/config/tiny.yaml").read_text())
MODEL = TINY["models"][0]["name"]
# The profile polls at a pace fit for a shared cluster; a test has the scheduler to itself.
FAST_POLLING = (
    "--slurm-init-seconds-before-status-checks=2",
    "--seconds-between-status-checks=2",
)
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
def slurm_cluster() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: tools/slurm/start.sh installs and starts the SLURM daemons")
    if not (shutil.which("apt-get") or shutil.which("slurmctld")):
        pytest.skip("no apt-get to install SLURM (Debian/Ubuntu packages) and no SLURM installed")
    was_up = cluster_is_up()
    started = subprocess.run(
        [START], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200
    )
    assert started.returncode == 0, f"tools/slurm/start.sh failed:\n{started.stdout[-4000:]}"
    yield
    if not was_up:
        subprocess.run([STOP], check=False, timeout=300)


def submissions(output: str) -> list[tuple[str, str, Path, str]]:
    """(Snakemake job id, SLURM job id, SLURM log, rule) of every sbatch submission."""
    return [(job, slurm, Path(log), rule) for job, slurm, log, rule in SUBMITTED.findall(output)]


def sacct(job_ids: list[str], fields: str) -> dict[str, dict[str, str]]:
    out = subprocess.run(
        ["sacct", "-X", "--noheader", "--parsable2", f"--format=JobIDRaw,{fields}",
         "--jobs", ",".join(job_ids)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
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


def test_slurm_run_equals_local_run(
    snakemake: Snakemake, tiny_run: Path, slurm_cluster: None, tmp_path: Path
) -> None:
    workdir = tmp_path / "slurm"
    start = time.monotonic()
    result = snakemake(workdir, "--profile", str(PROFILE), *FAST_POLLING, timeout=3000)
    wall = time.monotonic() - start
    jobs = submissions(result.stdout)

    # every job but the target rule `all` went through sbatch, with the profile's resources
    assert len(jobs) == int(re.search(r"^total\s+(\d+)$", result.stdout, re.M).group(1)) - 1
    accounting = sacct(
        [slurm for _, slurm, _, _ in jobs], "State,Partition,Account,AllocTRES,Timelimit"
    )
    for _, slurm, log, rule in jobs:
        job = accounting[slurm]
        assert job["State"] == "COMPLETED", (rule, job)
        assert (job["Partition"], job["Account"]) == (SITE["partition"], SITE["account"])
        gpu = "gres/gpu=1" in job["AllocTRES"].split(",")
        assert gpu == (rule == "score_nll_shard"), (rule, job["AllocTRES"])
        assert log.is_file()  # slurm-keep-successful-logs
    nll_jobs = [slurm for _, slurm, _, rule in jobs if rule == "score_nll_shard"]
    assert {accounting[slurm]["Timelimit"] for slurm in nll_jobs} == {"04:00:00"}

    local, remote = result_tables(tiny_run), result_tables(workdir)
    assert remote.keys() == local.keys()
    assert any("/nll/" in name for name in local) and any("effect_sizes" in name for name in local)
    exact = []
    for name, table in local.items():
        pd.testing.assert_frame_equal(remote[name], table, check_exact=False, rtol=1e-9, atol=1e-12)
        exact.append(remote[name].equals(table))
    print(
        f"\nSLURM run of the tiny config: {len(jobs)} sbatch jobs, {wall:.0f} s wall time; "
        f"{sum(exact)} of {len(exact)} result tables bit-identical to the local run"
    )


def test_failed_job_is_reported_with_its_slurm_log_and_retried(
    snakemake: Snakemake, slurm_cluster: None, tmp_path: Path
) -> None:
    missing = tmp_path / "missing.gguf"
    change = tmp_path / "broken.yaml"
    change.write_text(
        yaml.safe_dump({"models": [{"name": "broken", "source": {"path": str(missing)}}]})
    )
    result = snakemake(
        tmp_path / "run",
        "--profile",
        str(PROFILE),
        *FAST_POLLING,
        configfiles=[change],
        targets=["resources/models/broken.gguf"],
        check=False,
        timeout=900,
    )
    assert result.returncode != 0
    jobs = submissions(result.stdout)
    retries = yaml.safe_load((PROFILE / "config.yaml").read_text())["retries"]
    assert len(jobs) == 1 + retries  # the first attempt and each retry
    for _, slurm, log, rule in jobs:
        assert rule == "materialize_model"
        assert f"SLURM-job '{slurm}' failed, SLURM status is: 'FAILED'" in result.stdout
        assert re.search(rf"log: .*{re.escape(str(log))} \(check log file", result.stdout)
        assert f"{missing} does not exist" in log.read_text()


def test_cancelled_job_is_reported_with_its_slurm_log_and_retried(
    snakemake: Snakemake, tiny_run: Path, slurm_cluster: None, tmp_path: Path
) -> None:
    workdir = tmp_path / "run"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    shard = f"results/hippocorpus/nll/{MODEL}/shard-000.parquet"
    (workdir / shard).unlink()
    log_path = tmp_path / "snakemake.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            snakemake.command(workdir, "--profile", str(PROFILE), *FAST_POLLING, targets=[shard]),
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 300
        while not (jobs := submissions(log_path.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.5)
        first = jobs[0][1]
        while (
            subprocess.run(
                ["squeue", "--noheader", "--format=%T", "--jobs", first],
                capture_output=True,
                text=True,
            ).stdout.strip()
            != "RUNNING"
        ):
            assert time.monotonic() < deadline, "the shard job did not start"
            time.sleep(0.5)
        time.sleep(2)
        subprocess.run(["scancel", first], check=True)
        assert process.wait(timeout=900) == 0, log_path.read_text()[-4000:]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, 9)
    output = log_path.read_text()
    jobs = submissions(output)
    assert [rule for *_, rule in jobs] == ["score_nll_shard", "score_nll_shard"]
    cancelled_log = jobs[0][2]
    assert f"SLURM-job '{first}' failed, SLURM status is: 'CANCELLED'" in output
    assert re.search(rf"log: .*{re.escape(str(cancelled_log))} \(check log file", output)
    assert "Trying to restart job" in output
    assert (workdir / shard).is_file()
