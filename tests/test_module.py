"""storyflow as a Snakemake module of another workflow (docs/howto/install.md, "storyflow as a
Snakemake module"): ``module storyflow: snakefile: <checkout>/Snakefile; config: config`` with
``use rule * from storyflow`` in a folder of its own plans the same jobs as the checkout's own
Snakefile. Under ``module``, ``workflow.basedir`` is the *other* workflow's folder, so nothing
of the rules may find its files through it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import MEASURES_CONFIG, REPO, TINY_CONFIG, Snakemake
from test_reruns import parse_jobs


def test_no_rules_file_finds_its_files_through_the_main_snakefiles_folder() -> None:
    """workflow.basedir is the main Snakefile's folder: the user's, when storyflow is a module."""
    for path in [
        REPO / "Snakefile",
        REPO / "workflow" / "Snakefile",
        *(REPO / "workflow").rglob("*.smk"),
    ]:
        text = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
        assert "workflow.basedir" not in text, f"{path.relative_to(REPO)} uses workflow.basedir"
        assert not re.search(r"\bos\.getcwd\(\)|Path\.cwd\(\)", text), path


def jobs(output: str) -> Counter[tuple[str, str]]:
    """(rule, wildcards) of each job of a dry run's plan."""
    planned = parse_jobs(output)
    assert planned, output[-3000:]
    return Counter((job["rule"], job.get("wildcards", "")) for job in planned)


@pytest.mark.slow
def test_the_workflow_used_as_a_module_plans_the_same_jobs(
    tmp_path: Path, snakemake: Snakemake
) -> None:
    study = tmp_path / "study"
    study.mkdir()
    (study / "Snakefile").write_text(
        f"""configfile: {json.dumps(str(TINY_CONFIG))}
configfile: {json.dumps(str(MEASURES_CONFIG))}


module storyflow:
    snakefile:
        {json.dumps(str(REPO / "Snakefile"))}
    config:
        config


use rule * from storyflow
"""
    )
    mirror = "data=" + json.dumps({"mirror": str(snakemake.mirror)})
    as_module = subprocess.run(
        [sys.executable, "-m", "snakemake", "--dry-run", "--cores", "1", "--config", mirror],
        cwd=study,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = as_module.stdout + as_module.stderr
    assert as_module.returncode == 0, output[-6000:]
    # the checkout's own Snakefile on the same config (tests/conftest.py's runs: from another
    # working directory, where config/config.yaml is absent, so the tiny config alone)
    own = snakemake(
        tmp_path / "own", "--dry-run", "--cores", "1", configfiles=[MEASURES_CONFIG]
    ).stdout
    assert jobs(output) == jobs(own)
    assert ("all", "") in jobs(output)  # rule all is the module's default target too
    # every measure's rules, the comparison's and the files the rules find beside themselves
    rules = {rule for rule, _ in jobs(output)}
    assert {"make_fabula_items", "compute_covariates", "export_story_table"} <= rules, rules
    inputs = " ".join(job.get("input", "") for job in parse_jobs(output))
    assert "storyflow/data/antonyms.tsv" in inputs and "storyflow/data/connectives.tsv" in inputs
    assert not (study / "workflow").exists() and not (study / "results").exists()
