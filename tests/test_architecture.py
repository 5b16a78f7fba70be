"""The library's layers (docs/architecture.md): no import cycle, imports only go down a layer,
no measure imports another, and the picture in the docs is the graph of the code; and units a
reader can hold: no function over :data:`MAX_LINES` lines without a reason in its docstring."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest
from conftest import REPO

spec = importlib.util.spec_from_file_location("import_graph", REPO / "tools" / "import_graph.py")
assert spec and spec.loader
import_graph = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_graph)


def test_no_import_cycle_between_modules() -> None:
    graph = import_graph.graph()
    try:
        list(TopologicalSorter(graph).static_order())
    except CycleError as err:  # pragma: no cover - the failure message is the point
        pytest.fail(f"import cycle: {' -> '.join(err.args[1])}")


def test_every_module_belongs_to_a_layer() -> None:
    for module in import_graph.graph():
        if module != "storyflow":
            import_graph.layer_of(import_graph.unit(module))  # raises KeyError if none


def test_imports_go_to_the_same_layer_or_below() -> None:
    upward = [
        f"{source} ({import_graph.layer_of(source)}) imports {target} "
        f"({import_graph.layer_of(target)})"
        for source, targets in import_graph.unit_graph().items()
        for target in targets
        if import_graph.layer_of(target) > import_graph.layer_of(source)
    ]
    assert not upward


def test_no_measure_imports_another_measure() -> None:
    measures = {u for u in import_graph.unit_graph() if u.startswith("measures.")}
    assert {"measures.sequentiality", "measures.narrative_sense"} <= measures
    crossing = {
        (source, target)
        for source, targets in import_graph.unit_graph().items()
        for target in targets
        if source in measures and target in measures
    }
    assert not crossing


def test_the_lm_layer_knows_no_corpus_measure_or_figure() -> None:
    below = import_graph.unit_graph()["lm"]
    assert not below & {"corpora", "measures.sequentiality", "measures.narrative_sense", "figures"}


#: Packages the plan must not import: the Snakefile imports :mod:`storyflow.plan` at every parse
#: (each dry run, and each cluster job's own parse of the workflow), and each of these costs a
#: parse from a third of a second (scipy.stats) to seconds (torch).
HEAVY = ("scipy", "matplotlib", "spacy", "sklearn", "torch", "transformers", "llama_cpp")


def test_the_plan_imports_no_statistics_plotting_or_models() -> None:
    """The registry names every measure's verdict rule and cost rows: those modules stay light,
    and what needs scipy imports it when it runs."""
    code = "import sys, storyflow.plan; print(' '.join({m.split('.')[0] for m in sys.modules}))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "storyflow" in loaded and "pandas" in loaded  # it ran, and it sees what it imports
    assert not set(HEAVY) & set(loaded)


def test_the_checker_sees_a_cycle_and_an_upward_import(tmp_path, monkeypatch) -> None:
    package = tmp_path / "storyflow"
    (package / "corpora").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "errors.py").write_text("from storyflow import corpora\n")
    (package / "corpora" / "__init__.py").write_text("from storyflow.errors import X\n")
    monkeypatch.setattr(import_graph, "SRC", tmp_path)
    with pytest.raises(CycleError):
        list(TopologicalSorter(import_graph.graph()).static_order())
    units = import_graph.unit_graph()
    assert "corpora" in units["errors"]  # base importing a higher layer: caught by the rule


def test_the_docs_show_the_graph_of_the_code() -> None:
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert import_graph.mermaid() in page, (
        "docs/architecture.md is out of date: paste the output of "
        "`.venv/bin/python tools/import_graph.py` into its mermaid block"
    )


#: The most lines (``def`` to last line, docstring included) a function may take without a
#: docstring sentence that begins "Long because" (issue 38: units a reader can hold).
MAX_LINES = 60


def long_functions(root: Path) -> list[str]:
    """``file:line function (n lines)`` of every function (methods and nested ones included)
    under ``root`` longer than :data:`MAX_LINES` whose docstring does not say "Long because"."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            n_lines = node.end_lineno - node.lineno + 1
            if n_lines > MAX_LINES and "Long because" not in (ast.get_docstring(node) or ""):
                where = path.relative_to(root.parent)
                found.append(f"{where}:{node.lineno} {node.name} ({n_lines} lines)")
    return found


def test_no_long_function_without_a_reason() -> None:
    long = long_functions(REPO / "src" / "storyflow")
    assert not long, (
        f"functions over {MAX_LINES} lines: split them into named helpers, or say in the "
        "docstring why one stays long (a sentence beginning 'Long because'):\n" + "\n".join(long)
    )


def test_the_length_check_names_a_long_function_and_accepts_a_reason(tmp_path: Path) -> None:
    package = tmp_path / "storyflow"
    package.mkdir()
    module = package / "long.py"

    def write(body_lines: int, docstring: str = "") -> None:
        body = "".join(f"    x{i} = {i}\n" for i in range(body_lines))
        module.write_text(f"def short():\n    pass\n\n\ndef long():\n{docstring}{body}")

    write(MAX_LINES)  # the def line and MAX_LINES more
    assert long_functions(package) == [f"storyflow/long.py:5 long ({MAX_LINES + 1} lines)"]
    write(MAX_LINES, docstring='    """Long because it is a test."""\n')
    assert long_functions(package) == []
    write(MAX_LINES - 1)  # exactly MAX_LINES lines
    assert long_functions(package) == []
