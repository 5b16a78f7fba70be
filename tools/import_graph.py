"""The import graph of the storyflow library, by layer (docs/architecture.md shows its output).

    .venv/bin/python tools/import_graph.py            # Mermaid diagram of the package graph
    .venv/bin/python tools/import_graph.py --modules  # every module and what it imports

Imports are read from the source with ``ast`` (nothing is imported), including those inside
functions and ``TYPE_CHECKING`` blocks: a lazy import is still a dependency.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "storyflow"

#: Layers from the bottom up; a unit may import only from its own layer or those below.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "errors",
            "progress",
            "runner",
            "config_files",
            "settings",
            "history",
            "seeds",
            "tables",
            "versions",
            "path_names",
        ),
    ),
    ("data and models", ("corpora", "sentences", "lm")),
    ("statistics", ("bootstrap", "stats", "lmer", "validity")),
    (
        "measures",
        (
            "measures.sequentiality",
            "measures.narrative_sense",
            "measures.tension",
            "measures.plot_holes",
            "measures.fabula_entropy",
        ),
    ),
    (
        "comparison, replication and contrast answers",
        ("comparison", "replication", "contrast_answers"),
    ),
    (
        "figures, planning and the story explorer",
        ("figures", "plan", "estimate", "explorer"),
    ),
]


def modules() -> Iterator[tuple[str, Path]]:
    """Every module of the package as (dotted name, file)."""
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def imports(name: str, path: Path) -> set[str]:
    """The storyflow modules ``name`` imports (absolute, relative, lazy or for typing)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith(PACKAGE)}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            if base.startswith(PACKAGE):
                found.add(base)
                found |= {f"{base}.{a.name}" for a in node.names}
    known = {m for m, _ in modules()}
    return {m for m in found if m in known and m not in (name, PACKAGE)}


#: Packages that only group units (their ``__init__`` holds a docstring): not units themselves.
GROUPS = ("measures",)


def unit(module: str) -> str:
    """The layer unit a module belongs to (``storyflow.lm.nll.engine`` -> ``lm``)."""
    rest = module.removeprefix(f"{PACKAGE}.")
    for _, units in LAYERS:
        for u in sorted(units, key=len, reverse=True):
            if rest == u or rest.startswith(f"{u}."):
                return u
    return rest if module != PACKAGE else PACKAGE


def layer_of(u: str) -> int:
    for rank, (_, units) in enumerate(LAYERS):
        if u in units:
            return rank
    raise KeyError(f"{u} is in no layer of tools/import_graph.py")


def graph() -> dict[str, set[str]]:
    """Module -> the storyflow modules it imports."""
    groups = {f"{PACKAGE}.{g}" for g in GROUPS}
    return {name: imports(name, path) for name, path in modules() if name not in groups}


def unit_graph() -> dict[str, set[str]]:
    """Layer unit -> the other units it imports."""
    units: dict[str, set[str]] = {}
    for module, targets in graph().items():
        if module == PACKAGE:
            continue
        u = unit(module)
        units.setdefault(u, set()).update(unit(t) for t in targets if unit(t) != u)
    return units


def mermaid() -> str:
    """The unit graph as a Mermaid flowchart, one subgraph per layer, top layer first."""
    lines = ["flowchart TB"]
    for rank, (title, units) in reversed(list(enumerate(LAYERS))):
        lines.append(f'  subgraph L{rank}["{title}"]')
        lines += [f'    {u.replace(".", "_")}["{u}"]' for u in units]
        lines.append("  end")
    for source, targets in sorted(unit_graph().items()):
        lines += [
            f"  {source.replace('.', '_')} --> {t.replace('.', '_')}" for t in sorted(targets)
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", action="store_true", help="list module imports instead")
    if parser.parse_args().modules:
        for module, targets in sorted(graph().items()):
            print(module, "->", ", ".join(sorted(targets)) or "-")
    else:
        print(mermaid(), end="")


if __name__ == "__main__":
    main()
