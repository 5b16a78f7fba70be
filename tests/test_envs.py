"""Each conda environment (envs/*.yaml) holds what the rules that name it import: the
third-party modules of the rule's script and of every storyflow module the script reaches
(storyflow's imports followed through the library, lazy ones included). The environments
themselves are not built here: conda deployment (``--software-deployment-method conda``) is
not exercised on this machine (README, "Cluster (SLURM)")."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from packaging.requirements import Requirement
from test_layout import rule_blocks, section

spec = importlib.util.spec_from_file_location("import_graph", REPO / "tools" / "import_graph.py")
assert spec and spec.loader
import_graph = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_graph)

#: conda package names that are not the distribution's name on PyPI.
CONDA_NAMES = {"pytorch": "torch"}
#: Modules a rule reaches but never runs: (environment, module) and why. The regressions import
#: the covariates package for its column names; its sentence embeddings (torch, loaded inside
#: storyflow.lm.embeddings's functions) are never computed there.
NOT_RUN = {
    ("regression.yaml", "sentence_transformers"): "covariates' embeddings, not computed",
    ("regression.yaml", "torch"): "covariates' embeddings, not computed",
}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def module_file(module: str) -> Path:
    path = REPO / "src" / Path(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def imports_of(path: Path) -> tuple[set[str], set[str]]:
    """(third-party top-level modules, storyflow modules) that ``path`` imports anywhere."""
    outside, own = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top == "storyflow":
                own.add(name)
            elif top not in sys.stdlib_module_names and top != "__future__":
                outside.add(top)
    return outside, own


@cache
def library_graph() -> dict[str, set[str]]:
    return import_graph.graph()


def script_needs(script: Path) -> dict[str, str]:
    """Each third-party module ``script`` needs, with a file that imports it."""
    outside, own = imports_of(script)
    needs = {module: script.name for module in outside}
    known = library_graph()
    todo = [m for m in own if m in known]
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in imports_of(module_file(module))[0]:
            needs.setdefault(name, module)
        todo += [m for m in known[module] if m not in seen]
        package = module.rsplit(".", 1)[0]  # importing a module runs its packages' __init__
        if package in known and package not in seen:
            todo.append(package)
    return needs


def requirement_names(lines: list[str], base: Path) -> set[str]:
    names: set[str] = set()
    for raw in lines:
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-r "):
            target = base / line[3:].strip()
            names |= requirement_names(target.read_text().splitlines(), target.parent)
        elif line.startswith("-e ") or line in (".", ".."):
            project = (base / line.removeprefix("-e ").strip()).resolve()
            pyproject = tomllib.loads((project / "pyproject.toml").read_text())["project"]
            names |= {canonical(pyproject["name"])}
            names |= {canonical(Requirement(r).name) for r in pyproject["dependencies"]}
        elif not line.startswith("-"):
            names.add(canonical(Requirement(line.split(" --", 1)[0]).name))
    return names


def env_provides(env: Path) -> set[str]:
    """The distributions an environment file installs (conda packages and pip requirements,
    ``-r`` files and the ``-e`` project's declared dependencies followed)."""
    provided: set[str] = set()
    for dep in yaml.safe_load(env.read_text())["dependencies"]:
        if isinstance(dep, dict):
            provided |= requirement_names(dep.get("pip", []), env.parent)
        else:
            name = re.split(r"[=<>!\s]", dep, maxsplit=1)[0]
            provided.add(canonical(CONDA_NAMES.get(name, name)))
    return provided


def rules_with_envs() -> list[tuple[str, Path, Path]]:
    """(rule, environment file, script) of every rule that names both."""
    found = []
    for path in sorted((REPO / "workflow" / "rules").rglob("*.smk")):
        for name, body in rule_blocks(path.read_text()).items():
            conda = re.search(r'"([^"]+\.ya?ml)"', section(body, "conda"))
            script = re.search(r'"([^"]+\.py)"', section(body, "script"))
            if conda and script:
                env = (path.parent / conda.group(1)).resolve()
                found.append((name, env, (path.parent / script.group(1)).resolve()))
    return found


RULES = rules_with_envs()


def test_every_rule_with_a_script_names_an_environment_that_exists() -> None:
    assert len(RULES) > 50
    for path in (REPO / "workflow" / "rules").rglob("*.smk"):
        for name, body in rule_blocks(path.read_text()).items():
            if section(body, "script"):
                assert section(body, "conda"), f"rule {name} ({path.name}) names no conda env"
    for name, env, script in RULES:
        assert env.is_file() and env.parent == REPO / "envs", (name, env)
        assert script.is_file(), (name, script)


@pytest.mark.parametrize("env", sorted({env for _, env, _ in RULES}), ids=lambda p: p.name)
def test_each_environment_holds_what_its_rules_import(env: Path) -> None:
    provided = env_provides(env)
    providers = packages_distributions()
    missing = []
    for name, rule_env, script in RULES:
        if rule_env != env:
            continue
        for module, where in sorted(script_needs(script).items()):
            if (env.name, module) in NOT_RUN:
                continue
            distributions = {canonical(d) for d in providers.get(module, [module])}
            if not distributions & provided:
                missing.append(f"rule {name}: {module} (imported by {where})")
    assert not missing, f"{env.name} lacks:\n" + "\n".join(missing)


def test_the_main_environment_builds_llama_cpp_as_install_sh_does() -> None:
    """Every language-model rule imports llama_cpp; pip builds it from source, without
    -march=native (GGML_NATIVE=OFF), at install.sh's version."""
    pip = next(d for d in yaml.safe_load((REPO / "envs" / "storyflow.yaml").read_text())[
        "dependencies"] if isinstance(d, dict))["pip"]  # fmt: skip
    llama = [line for line in pip if line.startswith("llama-cpp-python")]
    version = re.search(r"LLAMA_VERSION=(\S+)", (REPO / "install.sh").read_text()).group(1)
    assert llama == [f"llama-cpp-python=={version} --config-settings=cmake.args=-DGGML_NATIVE=OFF"]
