"""The README's quick start, run as written (issue 54, item 3): the block under "Quick start:
your own stories" writes a config and runs the workflow on one's own CSV; this test runs that
block, unchanged, with bash in a folder that looks like a checkout (every top-level entry of this
one linked in, the virtual environment included) beside a small CSV of real stories, and checks
the answer table the README points to. So the README cannot drift from what runs.

The CSV holds the openings (first four sentences) of 10 HIPPOCORPUS stories, 5 imagined (group
``a``) and 5 recalled (group ``b``), with their summaries as topics: the shape the quick start
asks for (id, text, group, topic), each group at ``stats.min_group_size``. Openings, not whole
stories: the NLL stage is most of the run, and what is checked (the run, the tables' names, the
answer and the report) does not depend on a story's length; 12 whole stories of 110-140 words
took 256 s of the run's 280 s to score."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO

README = (REPO / "README.md").read_text()
SECTION = "## Quick start: your own stories"


def quick_start_block() -> str:
    """The quick start's bash block, as the README gives it."""
    section = README[README.index(SECTION) :]
    start = section.index("```bash\n") + len("```bash\n")
    return section[start : section.index("\n```", start)]


def answer_path() -> str:
    """The answer table the quick start names (the first results path in its text)."""
    section = README[README.index(SECTION) :]
    section = section[: section.index("\n## ", 1)]
    return re.search(r"`(results/[^`]+\.csv)`", section).group(1)


def test_the_quick_start_follows_the_two_commands_and_names_its_parts() -> None:
    # issue 58: the README in a user's order, the two commands (install.sh) first
    assert README.index("## Set-up and the two commands") < README.index(SECTION)
    block = quick_start_block()
    assert "--configfile my_study.yaml" in block
    assert answer_path().startswith("results/my_stories/")


def stand_in_checkout(root: Path) -> Path:
    """A folder whose top-level entries link to this checkout's (results and Snakemake's state
    left out): the README's commands, run there, run this checkout's workflow."""
    root.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in {"results", ".snakemake", ".git", "logs", "resources"}:
            (root / entry.name).symlink_to(entry)
    return root


def opening(text: str, sentences: int = 4) -> str:
    """A story's first ``sentences`` sentences (split after ., ! or ? and a space)."""
    return " ".join(re.split(r"(?<=[.!?])\s+", text.strip())[:sentences])


def write_stories(path: Path, mirror: Path) -> None:
    corpus = pd.read_csv(mirror / "hippocorpus" / "hippocorpus.csv")
    picked = []
    for kind, group in (("imagined", "a"), ("recalled", "b")):
        rows = corpus[(corpus["memType"] == kind) & corpus["summary"].notna()].head(5)
        picked.append(rows.assign(group=group, story=rows["story"].map(opening)))
    stories = pd.concat(picked)
    stories.rename(columns={"AssignmentId": "id", "story": "text", "summary": "topic"})[
        ["id", "text", "group", "topic"]
    ].to_csv(path, index=False)


@pytest.mark.slow
def test_the_quick_start_runs_as_written(tmp_path: Path, data_mirror: Path) -> None:
    checkout = stand_in_checkout(tmp_path / "storyflow")
    write_stories(checkout / "my_stories.csv", data_mirror)
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", quick_start_block()],
        cwd=checkout,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1800,
        env=os.environ | {"STORYFLOW_PROGRESS_SECONDS": "600"},
        check=False,
    )
    assert ran.returncode == 0, ran.stdout[-6000:]
    # Nothing but the user's corpus was planned.
    assert not re.search(r"results/(hippocorpus|books|hanna|rocstories)/", ran.stdout)
    answer = pd.read_csv(checkout / answer_path())
    assert set(answer["contrast"]) == {"a_vs_b"}
    assert set(answer["formulation"]) == {"topic", "context"}
    assert set(answer["model"]) == {"smollm2"}  # one model: no mean row
    head = answer.iloc[0]
    assert head["headline"] and (head["formulation"], head["histories"]) == ("context", "1-9")
    assert set(answer["design"]) == {"unmatched", "adjusted"}  # no blocks in this CSV
    # Every CSV table of the study names the group column as the config does (issue 64).
    for table in ("corpus/tables/sample_counts.csv", "corpus/tables/sentence_counts.csv",
                  "sequentiality/tables/sequentiality_by_type.csv",
                  "sequentiality/tables/scores/smollm2/stories.csv"):  # fmt: skip
        header = pd.read_csv(checkout / "results" / "my_stories" / table, nrows=0).columns
        assert "group" in header and "story_type" not in header, table
    # The README's report command, as written in the block, made the report; its first page
    # shows the headline, and no category the study lacks.
    report = (checkout / "report.html").read_text()
    assert "Your contrasts answered" in report and "a vs b" in report
    assert "no replication table yet" not in report
    assert "Comparison of measures" not in report
    assert (answer["ci_low"] <= answer["g"]).all() and (answer["g"] <= answer["ci_high"]).all()
    assert set(answer["answer"]) <= {"a difference", "no difference", "smaller than the band",
                                     "inconclusive"}  # fmt: skip
