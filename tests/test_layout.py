"""Every measure has the same shape (docs/adding_a_measure.md): a rules file
``workflow/rules/<measure>.smk`` whose lookups lie in ``workflow/rules/<measure>/common.smk``, a
planning module ``storyflow.plan.<measure>`` that owns its result paths, one report category,
and results under ``results/<corpus>/<measure>/`` (CSV tables in ``tables/``, figures in
``figures/``)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from storyflow import plan
from storyflow.plan.layout import Layout

REPO = Path(__file__).resolve().parents[1]
RULES = REPO / "workflow" / "rules"
#: Each measure's report category, and the comparison's.
CATEGORIES = {
    "sequentiality": "Sequentiality",
    "narrative_sense": "Narrative sense",
    "tension": "Tension",
    "fabula_entropy": "Fabula entropy",
    "plot_holes": "Plot holes",
    "comparison": "Comparison of measures",
}
HOMES = [*plan.MEASURES, "comparison"]


def rule_blocks(text: str) -> dict[str, str]:
    """Each ``rule NAME:`` of a rules file with its body (up to the next top-level line)."""
    blocks = re.split(r"^(?=\S)", text, flags=re.MULTILINE)
    return {m.group(1): block for block in blocks if (m := re.match(r"rule (\w+):", block))}


def section(body: str, name: str) -> str:
    """The lines of a rule's ``name:`` section."""
    found = re.search(rf"^    {name}:\n((?:        .*\n|\n)*)", body, flags=re.MULTILINE)
    return found.group(1) if found else ""


def measure_rules(measure: str) -> dict[str, str]:
    """The rules of a measure's home: its rules file and the stage files it includes."""
    files = [RULES / f"{measure}.smk", *sorted((RULES / measure).glob("*.smk"))]
    return {name: body for f in files for name, body in rule_blocks(f.read_text()).items()}


@pytest.mark.parametrize("measure", HOMES)
def test_every_measure_has_a_rules_file_lookups_and_a_planning_module(measure: str) -> None:
    assert (RULES / f"{measure}.smk").is_file()
    assert (RULES / measure / "common.smk").is_file()
    module = importlib.import_module(f"storyflow.plan.{measure}")
    assert Layout(measure) == module.OUT
    assert callable(module.final_outputs)
    snakefile = (REPO / "Snakefile").read_text()
    assert f'include: "workflow/rules/{measure}.smk"' in snakefile
    assert not rule_blocks((RULES / measure / "common.smk").read_text())  # lookups only


@pytest.mark.parametrize("measure", HOMES)
def test_every_rule_of_a_measure_writes_into_its_folder_and_report_category(measure) -> None:
    """Outputs are built from the measure's own layout (no literal result path), and every
    figure or table put in the report goes to the measure's category."""
    own = f"{measure.upper()}_OUT"
    rules = measure_rules(measure)
    assert rules, measure
    for name, body in rules.items():
        output = section(body, "output")
        assert output, f"rule {name} has no output"
        assert "results/" not in output, f"rule {name} writes a literal result path"
        layouts = set(re.findall(r"\b([A-Z_]+_OUT)\b", output))
        assert layouts == {own}, f"rule {name} of {measure} writes with {layouts}"
        categories = set(re.findall(r'(?<!sub)category="([^"]+)"', output))
        assert categories <= {CATEGORIES[measure]}, f"rule {name}: {categories}"


def test_final_outputs_follow_the_layout(default_config) -> None:
    """rule all's targets of the default config: each under a corpus's measure folder (or the
    measure's shared folder, or one of the two run-wide tables), CSVs in tables/, figures in
    figures/."""
    homes = {*HOMES, "corpus"}
    for path in plan.final_outputs(default_config):
        parts = Path(path).parts
        assert parts[0] == "results", path
        if len(parts) == 2:
            assert parts[1] in ("validity.csv", "lm_cost.csv"), path
            continue
        if parts[1] == "replication":  # run-wide: one table per paper, its figure in figures/
            assert (len(parts) == 3 and path.endswith(".csv")) or parts[2] == "figures", path
            continue
        inner = parts[2:] if parts[2] in homes else parts[1:]
        assert inner[0] in homes, path
        if path.endswith(".csv"):
            assert "tables" in inner, path
        if path.endswith((".png", ".pdf")):
            assert "figures" in inner, path


@pytest.mark.slow
def test_a_run_writes_every_file_into_the_layout(measures_run: Path) -> None:
    """Every file of a run of every measure lies in its measure's folder: CSVs in tables/,
    figures in figures/, nothing loose in a corpus folder."""
    results = measures_run / "results"
    homes = {*HOMES, "corpus"}
    files = [p.relative_to(results) for p in results.rglob("*") if p.is_file()]
    assert len(files) > 50
    for path in files:
        parts = path.parts
        if "/.progress/" in f"/{path.as_posix()}":
            continue
        if len(parts) == 1:
            assert parts[0] in ("validity.csv", "lm_cost.csv"), path
            continue
        if parts[0] == "replication":  # run-wide: one table per paper, its figure in figures/
            assert (len(parts) == 2 and path.suffix == ".csv") or parts[1] == "figures", path
            continue
        inner = parts if parts[0] in homes else parts[1:]
        assert inner[0] in homes, path
        if path.suffix == ".csv":
            assert "tables" in inner, path
        if path.suffix in (".png", ".pdf"):
            assert "figures" in inner, path
