"""Every measure has the same shape (docs/adding_a_measure.md): one record in
``storyflow.plan.registry``, a planning module ``storyflow.plan.<measure>`` that names every file
it writes, a rules folder ``workflow/rules/<measure>/`` (``common.smk`` with its lookups, one
rules file per stage), one report category, and results under ``results/<corpus>/<measure>/``
(CSV tables in ``tables/``, figures in ``figures/``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from storyflow import plan
from storyflow.plan.registry import MEASURES, PLAN_NAMES, rule_folders

REPO = Path(__file__).resolve().parents[1]
RULES = REPO / "workflow" / "rules"
#: The workflow's definition (workflow/Snakefile) and the top-level Snakefile that includes it.
SNAKEFILES = [REPO / "Snakefile", REPO / "workflow" / "Snakefile"]
#: The comparison's report category (each measure's is in its registry record).
COMPARISON_CATEGORY = "Comparison of measures"
HOMES = [m.name for m in MEASURES]


def rule_blocks(text: str) -> dict[str, str]:
    """Each ``rule NAME:`` of a rules file with its body (up to the next top-level line)."""
    blocks = re.split(r"^(?=\S)", text, flags=re.MULTILINE)
    return {m.group(1): block for block in blocks if (m := re.match(r"rule (\w+):", block))}


def section(body: str, name: str) -> str:
    """The lines of a rule's ``name:`` section."""
    found = re.search(rf"^    {name}:\n((?:        .*\n|\n)*)", body, flags=re.MULTILINE)
    return found.group(1) if found else ""


def stage_files(folder: str) -> list[Path]:
    return sorted(f for f in (RULES / folder).glob("*.smk") if f.name != "common.smk")


def folder_rules(folder: str) -> dict[str, str]:
    """The rules of a folder's stage files."""
    return {n: b for f in stage_files(folder) for n, b in rule_blocks(f.read_text()).items()}


def defined_names(text: str) -> set[str]:
    """The names a lookups file defines at its top level (assignments and functions)."""
    assigned = re.findall(r"^([A-Z][A-Z0-9_]*)(?:,\s*[A-Z][A-Z0-9_]*)*\s*=", text, re.MULTILINE)
    functions = re.findall(r"^def (\w+)\(", text, re.MULTILINE)
    return set(assigned) | set(functions)


def test_every_rules_file_lies_in_a_folder_of_the_registry() -> None:
    """workflow/rules/ holds common.smk and one folder per stage or measure, in the order the
    Snakefile includes them; nothing else."""
    top = {p.name for p in RULES.iterdir()}
    assert top == {"common.smk", *rule_folders()}, sorted(top)


def test_one_definition_of_the_workflow_where_the_catalog_and_users_look() -> None:
    """The Snakemake workflow catalog reads workflow/Snakefile whenever workflow/ exists (and
    skips a repository without it, or whose workflow/rules/ holds no .smk file); users run
    ``snakemake`` from the checkout, which finds the top-level Snakefile first. The definition is
    workflow/Snakefile; the top-level file holds nothing but its include (keeping its default
    target, rule all, which the dry runs without a target of test_no_data.py plan), so the two
    cannot drift apart."""
    top = REPO / "Snakefile"
    code = [
        line for line in top.read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    assert code == ['workflow.include("workflow/Snakefile", overwrite_default_target=True)'], code
    definition = (REPO / "workflow" / "Snakefile").read_text()
    assert re.search(r"^rule all:", definition, re.M) and "configfile:" in definition
    assert any(p.suffix == ".smk" and p.is_file() for p in RULES.iterdir())


def test_the_workflow_has_every_rule_of_every_rules_file() -> None:
    """The Snakefile includes every rules file: the rules Snakemake lists are exactly the
    ``rule``/``checkpoint`` statements written in the Snakefiles and under workflow/rules/.
    Listing them reads no data (tests/test_no_data.py), so no mirror is passed."""
    import subprocess
    import sys

    written = {
        match.group(1)
        for path in [*SNAKEFILES, *RULES.rglob("*.smk")]
        for match in re.finditer(r"^(?:rule|checkpoint) (\w+):", path.read_text(), re.M)
    }
    listed = subprocess.run(
        [sys.executable, "-m", "snakemake", "--list-rules", "--cores", "1"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=True,
    ).stdout.split()  # fmt: skip
    assert set(listed) == written and len(listed) == len(written) > 50


@pytest.mark.parametrize("folder", rule_folders())
def test_every_folder_has_its_lookups_apart_from_its_stages(folder: str) -> None:
    """common.smk holds lookups only; every other file holds rules only (no function, no
    assignment: Snakemake's linter wants them apart), at least one."""
    lookups = RULES / folder / "common.smk"
    if lookups.is_file():
        assert not rule_blocks(lookups.read_text()), f"{lookups} defines rules"
    files = stage_files(folder)
    assert files, f"{folder} has no rules file"
    for path in files:
        text = path.read_text()
        assert rule_blocks(text), f"{path} has no rule"
        assert not defined_names(text), f"{path} defines lookups: {defined_names(text)}"


@pytest.mark.parametrize("measure", MEASURES, ids=HOMES)
def test_every_measure_has_a_planning_module_of_the_registrys_shape(measure) -> None:
    module = measure.module
    assert module is getattr(plan, measure.name)
    assert all(callable(getattr(module, f)) for f in PLAN_NAMES if f.islower())
    assert module.OUT.name == measure.name
    # its roles are its own: <measure>.<role>, or the measure's name for its one role
    assert all(r.name.split(".")[0] == measure.name for r in measure.roles)
    assert (REPO / measure.doc).is_file()
    assert (REPO / "src" / "storyflow" / "measures" / measure.name / "__init__.py").is_file()


@pytest.mark.parametrize("folder", [*HOMES, "comparison"])
def test_every_rule_of_a_measure_writes_into_its_folder_and_report_category(folder) -> None:
    """Outputs are the measure's own named files (``plan.<measure>.NAME``; no literal path),
    and every figure or table put in the report goes to the measure's category."""
    category = plan.registry.measure(folder).category if folder in HOMES else COMPARISON_CATEGORY
    rules = folder_rules(folder)
    assert rules, folder
    for name, body in rules.items():
        output = section(body, "output")
        assert output, f"rule {name} has no output"
        assert "results/" not in output, f"rule {name} writes a literal result path"
        modules = set(re.findall(r"\bplan\.(\w+)\.[A-Z]", output))
        assert modules == {folder}, f"rule {name} of {folder} writes with {modules}"
        categories = set(re.findall(r'(?<!sub)category="([^"]+)"', output))
        assert categories <= {category}, f"rule {name}: {categories}"
        log = section(body, "log")
        assert f"plan.{folder}.OUT." in log and f'log("{name}"' in log, f"rule {name}: {log}"


def test_every_file_name_is_written_in_a_planning_module() -> None:
    """No rules file spells out a result, log or weights path: they come from the plan."""
    for path in RULES.rglob("*.smk"):
        text = path.read_text()
        for literal in ('"results/', '"logs/', '"resources/', '.parquet"', '.csv"', '.gguf"'):
            assert literal not in text, f"{path.relative_to(REPO)} writes {literal}"


def test_no_measure_reads_another_measures_lookups() -> None:
    """A measure's rules folder uses its own lookups, the shared ones (workflow/rules/common.smk,
    the corpora's and the models') and the planning modules, never another measure's."""
    own = {m: defined_names((RULES / m / "common.smk").read_text()) for m in HOMES}
    for measure in HOMES:
        text = "\n".join(p.read_text() for p in (RULES / measure).glob("*.smk"))
        for other, names in own.items():
            if other == measure:
                continue
            used = {n for n in names if re.search(rf"\b{n}\b", text)}
            assert not used, f"workflow/rules/{measure}/ reads {other}'s {sorted(used)}"


#: The run-wide tables directly under results/ (plan.layout's docstring).
RUN_WIDE = {
    Path(path).name
    for path in (
        plan.layout.VALIDITY,
        plan.layout.LM_COST,
        plan.models.PROVENANCE,
        plan.layout.RUN_RECORD,
    )
}


def test_final_outputs_follow_the_layout(default_config) -> None:
    """rule all's targets of the default config: each under a corpus's measure folder (or the
    measure's shared folder, or one of the run-wide tables; the replication tables and pages of
    the papers), CSVs in tables/, figures in figures/."""
    homes = {*HOMES, "comparison", "corpus"}
    for path in plan.final_outputs(default_config):
        parts = Path(path).parts
        assert parts[0] == "results", path
        if len(parts) == 2:
            assert parts[1] in RUN_WIDE, path
            continue
        if parts[1] == "replication":  # run-wide: a table and a page per paper, figures/
            page = len(parts) == 3 and path.endswith((".csv", ".html"))
            assert page or parts[2] == "figures", path
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
    homes = {*HOMES, "comparison", "corpus"}
    files = [p.relative_to(results) for p in results.rglob("*") if p.is_file()]
    assert len(files) > 50
    for path in files:
        parts = path.parts
        if "/.progress/" in f"/{path.as_posix()}":
            continue
        if len(parts) == 1:
            assert parts[0] in RUN_WIDE, path
            continue
        if parts[0] == "replication":  # run-wide: a table and a page per paper, figures/
            page = len(parts) == 2 and path.suffix in (".csv", ".html")
            assert page or parts[1] == "figures", path
            continue
        inner = parts if parts[0] in homes else parts[1:]
        assert inner[0] in homes, path
        if path.suffix == ".csv":
            assert "tables" in inner, path
        if path.suffix in (".png", ".pdf"):
            assert "figures" in inner, path


def test_each_measure_has_its_own_schema_part_and_the_config_schema_takes_it_whole() -> None:
    """workflow/schemas/measures/ holds one part per measure of the registry, nothing else;
    the config schema references each of its blocks, and, its parts inlined, holds every
    measure's block (the messages and defaults do not depend on where a block is written)."""
    import yaml

    from storyflow.config_files import load_schema

    schemas = REPO / "workflow" / "schemas"
    parts = {p.name.removesuffix(".schema.yaml") for p in (schemas / "measures").iterdir()}
    assert parts == set(plan.registry.names())
    main = yaml.safe_load((schemas / "config.schema.yaml").read_text())
    refs = {
        key: node["$ref"]
        for key, node in main["properties"].items()
        if str(node.get("$ref", "")).startswith("measures/")
    }
    for measure in plan.registry.names():
        assert any(ref.startswith(f"measures/{measure}.schema.yaml#") for ref in refs.values())
    whole = load_schema(schemas / "config.schema.yaml")
    for key in refs:
        block = whole["properties"][key]
        assert block["type"] == "object" and block["default"] == {} and block["properties"]


def test_the_rules_read_the_config_only_through_the_plan() -> None:
    """Every value a rule takes from the config comes from a storyflow.plan function (the one
    reader of the config's structure); a rules file writes only the report's summaries into the
    config (keys that start with ``_``)."""
    reads = []
    for path in sorted(RULES.rglob("*.smk")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            for found in re.finditer(r"config\[\"([^\"]+)\"\]", line):
                writes = found.group(1).startswith("_") and line.lstrip().startswith("config[")
                if not writes:
                    reads.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not reads, "\n".join(reads)


#: Where a measure's name may be spelled by code that is not the measure's own, and why: none of
#: these lists the measures or chooses among them.
NAMED_ELSEWHERE = {
    # the shared data folder <data>/narrative_sense/ (HANNA, ROCStories): a path, not the measure
    ("src/storyflow/corpora/__init__.py", "narrative_sense"),
    # the story explorer page's sections, keys of its JSON that explorer/page.js reads
    ("src/storyflow/explorer/gather.py", "sequentiality"),
    ("src/storyflow/explorer/gather.py", "tension"),
    ("src/storyflow/explorer/gather.py", "fabula_entropy"),
    ("src/storyflow/explorer/gather.py", "plot_holes"),
    # the regression covariate made of the narrative-sense story scores, and its config switch
    # regression.narrative_sense (sequentiality's schema)
    ("src/storyflow/measures/sequentiality/regression.py", "narrative_sense"),
    ("src/storyflow/plan/sequentiality.py", "narrative_sense"),
}


def _own_files(measure: str) -> set[str]:
    """The files that are the measure's own: its planning module, package, figures module,
    rules folder and the scripts its rules run."""
    src = REPO / "src" / "storyflow"
    own = [src / "plan" / f"{measure}.py", src / "figures" / f"{measure}.py"]
    own += (src / "measures" / measure).rglob("*.py")
    for rules in (RULES / measure).glob("*.smk"):
        own.append(rules)
        own += [REPO / "scripts" / s for s in re.findall(r"scripts/(\w+\.py)", rules.read_text())]
    return {str(p.relative_to(REPO)) for p in own}


def _spelled(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal of a Python file (``__all__`` aside: module names),
    or of every quoted word of a rules file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [
            (text.count("\n", 0, m.start()) + 1, m.group(2))
            for m in re.finditer(r"([\"'])([\w.]+)\1", text)
        ]
    tree = ast.parse(text)
    exported = {
        id(node)
        for stmt in tree.body
        if isinstance(stmt, ast.Assign)
        and any(getattr(t, "id", "") == "__all__" for t in stmt.targets)
        for node in ast.walk(stmt.value)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in exported
    ]


def test_measures_and_roles_are_named_only_by_the_registry_the_schema_and_their_own_code() -> None:
    """No code lists the measures or their roles: a measure's name is spelled only in its
    registry record, the schema and its own files (:data:`NAMED_ELSEWHERE` aside, with reasons);
    a role's name only in its measure's own files, whose planning module declares it once
    (``ROLES``); everything else reads them from the registry."""
    measures = {m.name for m in MEASURES}
    role_of = {r.name: m.name for m in MEASURES for r in m.roles}
    own = {name: _own_files(name) for name in measures}
    files = [*(REPO / "src" / "storyflow").rglob("*.py"), *(REPO / "scripts").glob("*.py")]
    files += [*RULES.rglob("*.smk"), *SNAKEFILES]
    found = []
    for path in files:
        where = str(path.relative_to(REPO))
        if where == "src/storyflow/plan/registry.py":
            continue
        for line, text in _spelled(path):
            measure = text if text in measures else role_of.get(text)
            if measure is None or where in own[measure]:
                continue
            if text in measures and (where, text) in NAMED_ELSEWHERE:
                continue
            found.append(f"{where}:{line} {text!r}")
    assert not found, "measure or role names spelled outside their measure: " + "; ".join(found)
    # the planning modules' roles are the schema's (tests/test_schema_mirrors.py), each declared
    # once: a role name appears once in its planning module
    for m in MEASURES:
        module = REPO / "src" / "storyflow" / "plan" / f"{m.name}.py"
        spelled = [t for _, t in _spelled(module)]
        assert all(spelled.count(r.name) == 1 for r in m.roles if r.name != m.name), m.name


def test_each_paper_is_one_record_hung_off_its_measure() -> None:
    """The papers are :data:`storyflow.replication.papers.PAPERS`, each the ``paper`` of one
    measure, with its published file and its measure's planning of it; no other library file,
    script or rules file spells a paper's name (the published files are named by it)."""
    from storyflow.plan.registry import PAPER_NAMES, replicating
    from storyflow.replication import papers, published

    assert [m.paper for m in MEASURES if m.paper] == list(papers.PAPERS.values())
    stems = {Path(str(f)).stem for f in published.FOLDER.iterdir() if f.name.endswith(".csv")}
    assert stems == set(papers.PAPERS)
    for name, paper in papers.PAPERS.items():
        measure = replicating(name)
        assert paper.published.is_file() and measure.paper is paper and callable(paper.comparer)
        assert all(callable(getattr(measure.module, f)) for f in PAPER_NAMES)
    files = [*(REPO / "src" / "storyflow").rglob("*.py"), *(REPO / "scripts").glob("*.py")]
    files += [*RULES.rglob("*.smk"), *SNAKEFILES]
    home = REPO / "src" / "storyflow" / "replication" / "papers.py"
    found = [
        f"{path.relative_to(REPO)}:{line} {text!r}"
        for path in files
        if path != home
        for line, text in _spelled(path)
        if text in papers.PAPERS
    ]
    assert not found, "paper names spelled outside their record: " + "; ".join(found)
