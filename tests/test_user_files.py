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


# --- the review sheet -------------------------------------------------------------------------
MADE = pd.DataFrame({"story_id": ["s1", "s2"], "version": ["F", "F"]})


def test_a_review_sheet_in_another_encoding_or_delimiter_or_empty_says_so(tmp_path) -> None:
    sheet = tmp_path / "sheet.csv"
    sheet.write_bytes(b"story_id,verdict,note\ns1,yes," + LATIN1 + b"\n")
    with pytest.raises(InputDataError, match=r"sheet.csv, row 2: the file is not UTF-8"):
        review.read_verdicts(sheet, MADE)
    sheet.write_text("story_id;verdict\ns1;yes\n")
    with pytest.raises(InputDataError, match=r"row 1: the header is separated by semicolon"):
        review.read_verdicts(sheet, MADE)
    sheet.write_text("story_id,verdict\n")
    with pytest.raises(InputDataError, match=r"row 2: no data rows.*one row per reviewed story"):
        review.read_verdicts(sheet, MADE)
    sheet.write_text("story_id,verdict\ns1,yes\n")
    assert review.read_verdicts(sheet, MADE) == {"s1": "yes"}


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
