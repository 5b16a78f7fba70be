"""docs/adding_a_measure.md, followed: a copy of the repository gets the guide's toy measure,
block by block, and the workflow plans it.

Each fenced block of the guide under a ``<!-- file PATH -->`` marker becomes that file; a block
under ``<!-- insert into PATH after "ANCHOR" -->`` is inserted after the one line of PATH that
reads ANCHOR. The copy is then dry-run with the measure switched on: its job must be planned
for its corpus, its story measures must reach rule all and the comparison, and nothing of the
repository itself is touched.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA_MIRROR

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "adding_a_measure.md"
MARKER = re.compile(
    r"<!-- (?:file (?P<file>\S+)|insert into (?P<into>\S+) after \"(?P<anchor>.+?)\") -->\n"
    r"```\w*\n(?P<body>.*?)```",
    re.DOTALL,
)


def guide_steps() -> list[tuple[str, str, str | None]]:
    """(path, text, anchor or None) of every block of the guide, in order."""
    steps = []
    for m in MARKER.finditer(GUIDE.read_text()):
        anchor = m.group("anchor")
        anchor = ast.literal_eval(f'"{anchor}"') if anchor is not None else None
        steps.append((m.group("file") or m.group("into"), m.group("body"), anchor))
    return steps


def apply(root: Path, path: str, text: str, anchor: str | None) -> None:
    target = root / path
    if anchor is None:
        assert not target.exists(), f"the guide's {path} would overwrite a file of the repository"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return
    content = target.read_text()
    lines = content.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if line == anchor]
    assert len(found) == 1, f"{path}: the guide's anchor {anchor!r} is on {len(found)} lines"
    lines.insert(found[0] + 1, text)
    target.write_text("".join(lines))


@pytest.fixture(scope="module")
def copy_with_the_toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's tracked and new files, with the guide's measure added."""
    root = tmp_path_factory.mktemp("with_length")
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for name in listed:
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    for path, text, anchor in guide_steps():
        apply(root, path, text, anchor)
    return root


def test_the_guide_has_a_block_for_every_step() -> None:
    paths = [path for path, _, _ in guide_steps()]
    assert "workflow/schemas/config.schema.yaml" in paths
    assert "src/storyflow/plan/registry.py" in paths
    for part in ("src/storyflow/plan/", "src/storyflow/measures/", "workflow/rules/", "scripts/"):
        assert any(p.startswith(part) for p in paths), part


def dry_run(root: Path, *configfiles: str) -> str:
    """``snakemake -n`` of the copy (its own library first on the path) with the default config
    and ``configfiles``: stdout + stderr."""
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    command = [
        sys.executable, "-m", "snakemake", "-n", "--cores", "1",
        "--configfile", "config/config.yaml", *configfiles,
        "--config", f"data={{mirror: {DATA_MIRROR}}}",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


@pytest.mark.usefixtures("data_mirror")
def test_a_measure_added_by_the_guide_is_planned_and_compared(copy_with_the_toy: Path) -> None:
    """The toy, chosen by name in ``measures:`` (the registry gives the names), runs for its
    corpus, its table is a target of rule all and an input of the comparison's story table, and
    with the measure off nothing of it is planned."""
    chosen = "measures: [sequentiality, length, comparison]\n"
    (copy_with_the_toy / "length.yaml").write_text(chosen)
    out = dry_run(copy_with_the_toy, "length.yaml")
    jobs = re.findall(r"^rule (\w+):\n(?:    .*\n)*?    output: (.*)$", out, re.MULTILINE)
    ours = [output for rule, output in jobs if rule == "measure_story_lengths"]
    assert ours == ["results/hippocorpus/length/story_measures.parquet"], ours
    tables = [output for rule, output in jobs if rule == "build_story_table"]
    assert any("results/hippocorpus/comparison/" in o for o in tables), tables
    story_table = out[out.index("rule build_story_table:") :].split("\n\n")[0]
    assert "results/hippocorpus/length/story_measures.parquet" in story_table
    off = dry_run(copy_with_the_toy)
    assert "measure_story_lengths" not in off
    assert not (REPO / "src" / "storyflow" / "plan" / "length.py").exists()
