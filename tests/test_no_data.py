"""Planning needs no data it does not read (issue 49, item 3). Parsing the workflow reads no
corpus file that is absent: ``snakemake --lint``, ``--list-rules`` and a dry run whose jobs read
no corpus run from a checkout with no data beside it; the books' manifest is read at parse time
only when it is there (the sample decides the book jobs). A run that plans a job reading a corpus
file that is missing stops before any job with one message naming every corpus of the config
that lacks its file, the config key and where to put it. ``--config 'data={"mirror": null}'``
means no mirror, as the schema says (Snakemake passes the nested value on as the text
"null")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, schema_defaults

from storyflow import plan
from storyflow.config_files import command_line_nulls

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def configured(mirror: str | None, **blocks: object) -> dict:
    """The default config with ``data.mirror`` and ``blocks`` changed, defaults filled."""
    return schema_defaults({**DEFAULT, "data": {"mirror": mirror}, **blocks})


def test_the_corpora_a_config_reads() -> None:
    """The default reads every built-in corpus (ROCStories for fabula entropy and the tension
    calibration, HANNA for the per-story measures); the HIPPOCORPUS replication reads one."""
    assert plan.read_corpora(configured("data")) == ["hippocorpus", "books", "hanna", "rocstories"]
    hippocorpus_only = yaml.safe_load((REPO / "config" / "hippocorpus_30.yaml").read_text())
    config = schema_defaults({**DEFAULT, **hippocorpus_only})
    assert plan.read_corpora(config) == ["hippocorpus"]
    # tension alone still reads ROCStories: its forecasters are checked there
    only_tension = {key: {"enabled": False} for key in ("narrative_sense", "fabula_entropy")}
    config = configured("data", **only_tension, plot_holes={"enabled": False})
    assert "rocstories" in plan.read_corpora(config)


def test_a_mirror_that_lacks_a_file_names_it_and_its_key(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "hippocorpus").mkdir(parents=True)
    (mirror / "hippocorpus" / "hippocorpus.csv").write_text("AssignmentId\n")
    config = configured(str(mirror))
    assert plan.corpus.missing_data(config, "hippocorpus") is None
    books = plan.corpus.missing_data(config, "books")
    assert books is not None
    assert f"config books.manifest, is not at {mirror}/books/MANIFEST.tsv" in books
    assert "leave the books out: books.enabled: false" in books
    hanna = plan.corpus.missing_data(config, "hanna")
    assert hanna is not None and "config narrative_sense.hanna" in hanna
    assert "null" not in hanna  # no download to fall back on
    problem = plan.corpus.data_problem(config, ["hanna"], plan.read_corpora(config))
    assert problem is not None
    lines = problem.splitlines()
    assert lines[0].startswith(
        f"the data this run reads is not in the data mirror (data.mirror: {str(mirror)!r}"
    )
    assert lines[1].startswith("  - hanna (HANNA")
    assert lines[2] == "The config's other corpora lack theirs too:"
    assert [line.split(" (")[0] for line in lines[3:]] == ["  - books", "  - rocstories"]
    assert plan.corpus.data_problem(config, ["hippocorpus"], ["books", "hanna"]) is None
    (mirror / "hippocorpus" / "hippocorpus.csv").unlink()
    hippocorpus = plan.corpus.missing_data(config, "hippocorpus")
    assert hippocorpus is not None
    assert hippocorpus.endswith("or set data.mirror to null to download the official release")


def test_with_no_mirror_files_are_read_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No mirror: HIPPOCORPUS is downloaded (nothing missing); the books' manifest and the
    HANNA and ROCStories files have no download and are looked for where their keys say,
    relative to the working directory."""
    monkeypatch.chdir(tmp_path)
    config = configured(None)
    assert plan.corpus.missing_data(config, "hippocorpus") is None
    problem = plan.corpus.data_problem(config, plan.read_corpora(config))
    assert problem is not None
    assert f"relative to the working directory {tmp_path})" in problem
    assert "hippocorpus" not in problem.split(":\n", 1)[1]
    assert (
        "books (public-domain books by genre (a manifest of labelled plain-text books)): its "
        "manifest, config books.manifest, is not at books/MANIFEST.tsv; put it there or set "
        "books.manifest to where it is" in problem
    )
    for corpus, key in (
        ("hanna", "narrative_sense.hanna"),
        ("rocstories", "narrative_sense.rocstories"),
    ):
        path = config["narrative_sense"][corpus]
        assert f"config {key}, is not at {path}; put it there" in problem
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("")
    Path("books").mkdir()
    Path("books/MANIFEST.tsv").write_text("category\tgutenberg_id\n")
    assert plan.corpus.data_problem(config, plan.read_corpora(config)) is None


def test_absent_books_of_the_sample_in_a_mirror_are_named(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "books").mkdir(parents=True)
    (mirror / "books" / "MANIFEST.tsv").write_text("category\tgutenberg_id\nfiction\t7\n")
    config = configured(str(mirror), books={**DEFAULT["books"], "sample": {"per_genre": None}})
    books = plan.corpus.selected_books(config)
    assert books is not None and list(books["document_id"]) == ["7"]
    missing = plan.corpus.missing_data(config, "books", books)
    assert missing is not None
    assert missing.startswith("books: 1 book(s) of the sample are not in the data mirror")
    assert f"{mirror}/books/fiction/7.txt" in missing
    (mirror / "books" / "fiction").mkdir()
    (mirror / "books" / "fiction" / "7.txt").write_text("Call me Ishmael.")
    assert plan.corpus.missing_data(config, "books", plan.corpus.selected_books(config)) is None
    (mirror / "books" / "MANIFEST.tsv").unlink()
    assert plan.corpus.selected_books(config) is None  # read when it is there


def test_a_null_on_the_command_line_is_null_where_the_schema_allows_it() -> None:
    command_line = {
        "data": {"mirror": "null"},
        "hippocorpus": {"mirror_path": "~", "url": "nulls.zip"},
        "plot_holes": {"benchmark": "NULL"},
    }
    config = {**DEFAULT, **json.loads(json.dumps(command_line))}
    changed = command_line_nulls(config, SCHEMA, command_line)
    assert changed == ["data.mirror", "plot_holes.benchmark"]
    assert config["data"]["mirror"] is None and config["plot_holes"]["benchmark"] is None
    # the schema takes only text there: the text stays, and the schema check names it if wrong
    assert config["hippocorpus"] == {"mirror_path": "~", "url": "nulls.zip"}


def run(
    *args: str, cwd: Path, configfiles: tuple[Path, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``snakemake`` on this checkout's Snakefile from ``cwd`` (a folder with no data beside
    it), the default config (then ``configfiles``), and ``args``."""
    command = [
        sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
        "--configfile", str(REPO / "config" / "config.yaml"), *map(str, configfiles), *args,
    ]  # fmt: skip
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_lint_and_a_run_needing_no_corpus_read_no_data(tmp_path: Path) -> None:
    """From a folder with nothing beside it (the default config's ../shared/data absent): the
    linter passes, and a dry run of a model's weights plans without a corpus file."""
    linted = run("--lint", cwd=tmp_path)
    assert linted.returncode == 0, linted.stdout[-3000:] + linted.stderr[-3000:]
    weights = "resources/models/gemma3-270m.gguf"
    planned = run("-n", "--cores", "1", weights, cwd=tmp_path)
    assert planned.returncode == 0, planned.stdout[-3000:] + planned.stderr[-3000:]
    assert "materialize_model" in planned.stdout


def test_a_hippocorpus_only_dry_run_with_no_data_and_no_mirror(tmp_path: Path) -> None:
    """The HIPPOCORPUS replication config with no mirror, given on the command line: rule all
    plans the whole study, the corpus from the download rule."""
    result = run(
        "-n", "--cores", "1", "--config", 'data={"mirror": null}', cwd=tmp_path,
        configfiles=(REPO / "config" / "hippocorpus_30.yaml",),
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    for rule in ("all", "download_hippocorpus", "sample_stories", "score_nll_shard"):
        assert f"\n{rule} " in out or f"rule {rule}:" in out, rule


def test_no_mirror_names_every_corpus_to_put_in_place(tmp_path: Path) -> None:
    """The default config with no mirror: one message before any job, naming the three corpora
    that have no download and where each goes (HIPPOCORPUS is downloaded)."""
    result = run("-n", "--cores", "1", "--config", 'data={"mirror": null}', cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == 1
    assert "storyflow: the data this run reads is missing (data.mirror is null" in out
    for line in (
        "  - books (", "is not at books/MANIFEST.tsv; put it there",
        "  - hanna (", "config narrative_sense.hanna, is not at stories/hanna/",
        "  - rocstories (", "narrative_sense.rocstories, is not at stories/rocstories_cloze/",
    ):  # fmt: skip
        assert line in out, line
    assert "  - hippocorpus" not in out and "Traceback" not in out and "score_nll" not in out


def test_a_config_of_models_alone_plans_on_the_schema_defaults(tmp_path: Path) -> None:
    """Without config/config.yaml (a module's config, or a folder of its own), the schema's
    defaults hold every key but ``models``: a config naming only the models plans
    sequentiality on HIPPOCORPUS, downloaded (data.mirror's default is null), with no data
    beside it; a config without models says it lacks them, in one line."""
    from storyflow.config_files import schema_problem

    models = tmp_path / "models.yaml"
    models.write_text(json.dumps({"models": DEFAULT["models"]}))
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "-n",
         "--cores", "1", "--configfile", str(models)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    assert "download_hippocorpus" in out and "score_nll_shard" in out
    assert "sample_passages" not in out and "sample_endings" not in out
    problem = schema_problem({"data": {"mirror": None}}, SCHEMA)
    assert problem is not None
    assert problem.startswith("config: the config lacks the required key 'models' (The language")
    assert problem.endswith("Fix: add the key models")
