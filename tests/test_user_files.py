"""User files that explain themselves (issue 23): config YAML, review sheets, FlawedFictions
files and antonym lexicons in the wrong encoding, with another delimiter, with no data rows or
not parsing: one message naming the file, the line, the cause and the fix, never a traceback.
The corpus CSVs' own cases are in test_hippocorpus.py and test_corpora.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO

from storyflow.config_files import yaml_problem
from storyflow.errors import InputDataError, StoryflowError
from storyflow.measures.fabula_entropy.lexicon import load_antonyms
from storyflow.measures.plot_holes import benchmark, review

LATIN1 = "caf\xe9".encode("latin-1")


# --- config files -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("corpus:\n  name: hippocorpus\n\tstories: 10\n", r"line 3, column 1 .*a tab character"),
        ("models:\n  - name: a\n    roles: [x, y\n", r"line 4.*expected ','.*began on line 3"),
        ("corpus: name: hippocorpus\n", r"line 1, column 13 .*mapping values are not allowed"),
        ("- hippocorpus\n- books\n", r"line 1: the file holds a list, not settings"),
    ],
)
def test_a_config_yaml_mistake_names_the_file_the_line_the_cause_and_the_fix(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "my.yaml"
    path.write_text(text)
    problem = yaml_problem(path)
    assert problem is not None and problem.startswith(str(path))
    assert re.search(expected, problem), problem
    assert "Fix:" in problem or "mapping of keys" in problem
    assert yaml_problem(REPO / "config" / "config.yaml") is None
    assert yaml_problem(REPO / "config" / "paper.yaml") is None


def test_the_workflow_names_the_line_of_a_broken_config_file(tmp_path: Path) -> None:
    """The Snakefile checks its config file before Snakemake reads it (whose own message,
    'Config file is not valid JSON or YAML', names neither file nor line)."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("corpus:\n  name: [hippocorpus\n")
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "-n"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 1
    assert "storyflow: config/config.yaml, line 3" in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def test_the_config_checker_runs_on_files_given_with_configfile(tmp_path: Path) -> None:
    bad = tmp_path / "mine.yaml"
    bad.write_text("plot_holes:\n  detection: {format: paper\n")
    command = [sys.executable, "-m", "storyflow.config_files", str(bad)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and f"{bad}, line 3" in result.stderr


SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@pytest.mark.parametrize(
    ("text", "key", "said"),
    [
        ("tension:\n  k: 0\n", "tension.k = 0", "must be an integer of at least 1"),
        ("tension:\n  kk: 3\n", "unknown key tension.kk", "did you mean tension.k?"),
        ("nll:\n  max_history: nine\n", 'nll.max_history = "nine"', "is a text (string), but"),
        ("tensoin:\n  k: 3\n", "unknown key tensoin", "did you mean tension?"),
        ("validity:\n  bootstrap: 500\n", "validity.bootstrap", "moved to stats.resamples"),
        (
            "replication:\n  equivalence_band: 1.2\n",
            "replication.equivalence_band = 1.2",
            "must be a number between 0 and 0.5 (exclusive)",
        ),
        ("stats:\n  confidence: 0.1\n", "stats.confidence = 0.1", "of at least 0.5 and below 1"),
        ("hippocorpus:\n  sample: {seed: -3}\n", "hippocorpus.sample.seed = -3", "at least 0"),
    ],
    ids=[
        "below-minimum",
        "unknown-key",
        "string-for-integer",
        "unknown-top-level-key",
        "moved",
        "band-that-reads-every-effect-as-none",
        "confidence-below-half",
        "negative-seed",
    ],
)
def test_a_config_schema_mistake_is_one_line_naming_the_key_not_the_schema(
    snakemake, tmp_path: Path, text: str, key: str, said: str
) -> None:
    """A real dry run: Snakemake's own message would print the schema node (for an unknown
    top-level key the whole schema, 8,000 lines); storyflow's names the key, its value, the file
    that set it, what is allowed and the fix, in one line."""
    mine = tmp_path / "mine.yaml"
    mine.write_text(text)
    result = snakemake(tmp_path / "work", "-n", configfiles=[mine], check=False)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    problem = next(line for line in lines if line.startswith("storyflow: config: "))
    assert key in problem and said in problem and f"(in {mine})" in problem, problem
    assert "Fix:" in problem
    assert len(lines) <= 3, result.stdout[-3000:]  # Snakemake's dump: 12 to 8,000 lines
    for dump in ("Failed validating", "On instance", "$schema", "'description':", "Traceback"):
        assert dump not in result.stdout


def test_the_schema_check_fills_the_defaults_exactly_as_snakemake_does() -> None:
    """storyflow validates the config itself (for its messages); the defaults it fills must be
    Snakemake's validate's, to the value, for every config file and test config merged over
    the default as the workflow merges them."""
    import copy

    import yaml
    from snakemake.utils import update_config, validate

    from storyflow.config_files import schema_problem

    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    tiny = yaml.safe_load((REPO / "tests" / "config" / "tiny.yaml").read_text())
    merged = {
        "config.yaml": default,
        "paper.yaml": yaml.safe_load((REPO / "config" / "paper.yaml").read_text()),
    }
    for path in sorted((REPO / "tests" / "config").glob("*.yaml")):
        config = copy.deepcopy(default)
        update_config(config, tiny)
        update_config(config, yaml.safe_load(path.read_text()) or {})
        merged[path.name] = config
    for name, config in merged.items():
        theirs, ours = copy.deepcopy(config), copy.deepcopy(config)
        validate(theirs, str(SCHEMA))
        assert schema_problem(ours, SCHEMA) is None, name
        assert ours == theirs, name
        assert ours != config, name  # defaults were filled in
    bare: dict = {"models": default["models"]}
    assert schema_problem(bare, SCHEMA) is None
    assert bare["tension"]["k"] == 100 and bare["nll"]["max_history"] == 9  # the schema's


def _numbers(node: object, path: str = "") -> list[tuple[str, dict]]:
    """Every number or integer key of a schema node, with its schema (``[]``: a list's items or
    a mapping's values, ``|k``: the k-th alternative)."""
    found: list[tuple[str, dict]] = []
    if not isinstance(node, dict):
        return found
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if {"number", "integer"} & set(kinds):
        found.append((path, node))
    for key, value in node.items():
        if key == "properties":
            for name, child in value.items():
                found += _numbers(child, f"{path}.{name}" if path else name)
        elif key in ("items", "additionalProperties"):
            found += _numbers(value, f"{path}[]")
        elif key in ("oneOf", "anyOf"):
            for k, child in enumerate(value):
                found += _numbers(child, f"{path}|{k}")
    return found


def test_every_number_of_the_schema_has_its_range_said_in_words() -> None:
    """Each number a config sets has the range in which it means what its key says (a seed
    numpy takes, a share between 0 and 1, a threshold above chance, a temperature hosted APIs
    accept), and a value outside it is refused with that range as words, never as the
    schema's signs ("between 0 and 1 (exclusive)", not "> 0 < 1")."""
    from storyflow.config_files import _allowed, load_schema

    numbers = _numbers(load_schema(SCHEMA))
    assert len(numbers) > 100
    bounds = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
    unbounded = [path for path, node in numbers if not any(b in node for b in bounds)]
    assert not unbounded, f"numbers without a range: {unbounded}"
    for path, node in numbers:
        said = _allowed(node)
        assert not set(said) & set("<>≤≥"), (path, said)
        assert said.startswith(("an integer", "a number")), (path, said)
    seeds = [node for path, node in numbers if path.rsplit(".", 1)[-1] == "seed"]
    assert len(seeds) >= 10 and all(node.get("minimum") == 0 for node in seeds)


# --- the review sheet -------------------------------------------------------------------------
MADE = pd.DataFrame(
    {
        "story_id": ["s1", "s2"],
        "version": ["F", "F"],
        "n_sentences": [6, 6],
        "error_lines": [[5], [4]],
        "contr_lines": [[1], [2]],
    }
)


def test_a_review_sheet_in_another_encoding_or_delimiter_or_empty_says_so(tmp_path) -> None:
    sheet = tmp_path / "sheet.csv"
    sheet.write_bytes(b"story_id,verdict,note\ns1,yes," + LATIN1 + b"\n")
    with pytest.raises(InputDataError, match=r"sheet.csv, row 2: the file is not UTF-8"):
        review.read_reviews(sheet, MADE, 1)
    sheet.write_text("story_id;verdict\ns1;yes\n")
    with pytest.raises(InputDataError, match=r"row 1: the header is separated by semicolon"):
        review.read_reviews(sheet, MADE, 1)
    sheet.write_text("story_id,verdict\n")
    with pytest.raises(InputDataError, match=r"row 2: no data rows.*one row per reviewed story"):
        review.read_reviews(sheet, MADE, 1)
    sheet.write_text("story_id,verdict\ns1,yes\n")
    assert review.read_reviews(sheet, MADE, 1) == {"s1": review.Review("yes", 1, 1, (5,), (1,))}


# --- FlawedFictions files ---------------------------------------------------------------------
def test_a_flawed_fictions_file_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    lines = tmp_path / "ff.jsonl"
    lines.write_text('{"story": "A.", "cont_error": false}\n{"story": "B., "cont_error": true}\n')
    with pytest.raises(InputDataError, match=r"ff.jsonl, row 2: not valid JSON"):
        benchmark._records(lines)
    listed = tmp_path / "ff.json"
    listed.write_text('[\n  {"story": "A.", "cont_error": false},\n  {"story": "B."\n]\n')
    with pytest.raises(InputDataError, match=r"ff.json, row 4: not valid JSON"):
        benchmark._records(listed)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"story": "' + LATIN1 + b'", "cont_error": false}\n')
    with pytest.raises(InputDataError, match="not UTF-8"):
        benchmark._records(latin)
    table = tmp_path / "ff.csv"
    table.write_text("story\tcont_error\nA.\tfalse\n")
    with pytest.raises(InputDataError, match="separated by tab"):
        benchmark._records(table)


# --- antonym lexicons -------------------------------------------------------------------------
def test_an_antonym_lexicon_in_another_encoding_names_the_line(tmp_path: Path) -> None:
    lexicon = tmp_path / "antonyms.tsv"
    lexicon.write_bytes(b"# mine\nword\tantonym\tpos\nhot\tcold\tADJ\n" + LATIN1 + b"\tx\tADJ\n")
    with pytest.raises(InputDataError, match=r"antonyms.tsv, row 4: the file is not UTF-8"):
        load_antonyms(lexicon)
    lexicon.write_text("# mine\nword\tantonym\tpos\nhot\tcold\tADJ\n")
    assert load_antonyms(lexicon)[("hot", "ADJ")] == ["cold"]
    lexicon.write_text("word,antonym,pos\nhot,cold,ADJ\n")
    with pytest.raises(StoryflowError, match="missing columns"):
        load_antonyms(lexicon)


def test_the_other_user_files_share_the_byte_order_mark_reading(tmp_path: Path) -> None:
    """Lexicons, review sheets and FlawedFictions files are read by the corpora's decoder
    (storyflow.corpora.base.decode_text): UTF-16 with a byte-order mark is read; without one it
    is named as UTF-16, with the iconv command, not taken for Windows-1252."""
    lexicon = tmp_path / "antonyms.tsv"
    lexicon.write_bytes("\ufeff# mine\nword\tantonym\tpos\nhot\tcold\tADJ\n".encode("utf-16-le"))
    assert load_antonyms(lexicon)[("hot", "ADJ")] == ["cold"]
    sheet, twin = tmp_path / "sheet.csv", tmp_path / "utf8.csv"
    sheet.write_bytes("\ufeffstory_id,verdict\ns1,yes\n".encode("utf-16-be"))
    twin.write_text("story_id,verdict\ns1,yes\n", encoding="utf-8")
    assert review.read_reviews(sheet, MADE, 1) == review.read_reviews(twin, MADE, 1) != {}
    lines = tmp_path / "ff.jsonl"
    lines.write_bytes('{"story": "A.", "cont_error": false}\n'.encode("utf-16-le"))
    with pytest.raises(InputDataError) as err:
        benchmark._records(lines)
    assert "looks like UTF-16LE text without a byte-order mark" in str(err.value)
    assert "iconv -f UTF-16LE -t UTF-8 ff.jsonl > utf8-ff.jsonl" in str(err.value)
