"""One version, written once (issue 49, item 6): ``storyflow.__version__``. pyproject.toml reads
it (a dynamic version, resolved here by setuptools as a build resolves it), CITATION.cff and the
README's BibTeX entry state it with its release date, CHANGELOG.md's newest version is it (in the
form of Keep a Changelog, versions and dates in order), and every run records it in
``results/run.csv`` (rule record_run, :mod:`storyflow.versions`)."""

from __future__ import annotations

import re
import tomllib
from datetime import date
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from packaging.version import Version

import storyflow
from storyflow import versions
from storyflow.errors import StoryflowError

CHANGELOG = (REPO / "CHANGELOG.md").read_text()
#: ``## [0.2.0] - 2026-11-28``: a released version's heading.
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", re.M)


def releases() -> list[tuple[Version, date]]:
    return [(Version(v), date.fromisoformat(d)) for v, d in RELEASE.findall(CHANGELOG)]


def test_pyproject_reads_the_version_from_the_package() -> None:
    from setuptools.config.pyprojecttoml import read_configuration

    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "storyflow.__version__"}
    resolved = read_configuration(REPO / "pyproject.toml", expand=True)["project"]["version"]
    assert resolved == storyflow.__version__
    init = (REPO / "src" / "storyflow" / "__init__.py").read_text()
    assert init.count(storyflow.__version__) == 1  # written once


def test_the_changelog_keeps_a_changelog() -> None:
    assert CHANGELOG.startswith("# Changelog\n")
    assert "keepachangelog.com/en/1.1.0" in CHANGELOG and "semver.org" in CHANGELOG
    headings = re.findall(r"^## (.+)$", CHANGELOG, re.M)
    assert headings[0] == "[Unreleased]"
    assert all(RELEASE.match(f"## {h}") for h in headings[1:]), headings
    found = releases()
    assert len(found) == len(headings) - 1 >= 2
    assert [v for v, _ in found] == sorted((v for v, _ in found), reverse=True)
    assert [d for _, d in found] == sorted((d for _, d in found), reverse=True)
    assert found[-1][1] == date(2026, 11, 22)  # the project's first commit
    for section in re.split(r"^## ", CHANGELOG, flags=re.M)[2:]:
        kinds = re.findall(r"^### (.+)$", section, re.M)
        assert kinds and set(kinds) <= {
            "Added",
            "Changed",
            "Deprecated",
            "Removed",
            "Fixed",
            "Security",
        }


def test_citation_readme_and_changelog_state_the_version_and_its_date() -> None:
    newest, released = releases()[0]
    assert str(newest) == storyflow.__version__
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["version"] == storyflow.__version__
    assert date.fromisoformat(citation["date-released"]) == released
    bibtex = re.search(
        r"```bibtex\n(@software\{storyflow,.*?\n\})\n```", (REPO / "README.md").read_text(), re.S
    )
    assert bibtex, "the README's BibTeX entry"
    fields = dict(re.findall(r"^\s+(\w+)\s*=\s*\{(.*)\},$", bibtex.group(1), re.M))
    assert fields["version"] == storyflow.__version__
    assert fields["date"] == released.isoformat() and fields["year"] == str(released.year)
    assert fields["title"] == citation["title"] and fields["license"] == citation["license"]


def test_a_run_records_the_version_and_its_libraries() -> None:
    planned = versions.planned()
    record = versions.run_record(planned)
    assert list(record.columns) == ["component", "version", "decides"]
    assert list(record["component"][:4]) == [
        "storyflow",
        "storyflow commit",
        "storyflow uncommitted changes",
        "python",
    ]
    by_name = dict(zip(record["component"], record["version"], strict=True))
    assert by_name["storyflow"] == storyflow.__version__
    assert by_name["snakemake"] == planned["snakemake"] != versions.NOT_INSTALLED
    assert versions.installed("no-such-distribution-here") == versions.NOT_INSTALLED
    with pytest.raises(StoryflowError, match=r"planned with storyflow 0\.0\.1: run the jobs"):
        versions.run_record({**planned, "storyflow": "0.0.1"})


def test_the_run_record_names_the_checkouts_commit_and_its_uncommitted_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 56: results/run.csv records the git commit of the storyflow checkout that planned
    the run and whether it had uncommitted changes; "unknown" when storyflow is no checkout."""
    import subprocess

    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    status = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    planned = versions.planned()
    assert planned["storyflow commit"] == head
    assert planned["storyflow uncommitted changes"] == ("yes" if status.strip() else "no")
    record = versions.run_record(planned).set_index("component")["version"]
    assert list(record.index[:4]) == [
        "storyflow",
        "storyflow commit",
        "storyflow uncommitted changes",
        "python",
    ]
    assert record["storyflow commit"] == head
    # storyflow as an installed copy, outside any git checkout
    copy = tmp_path / "site-packages" / "storyflow" / "__init__.py"
    copy.parent.mkdir(parents=True)
    copy.write_text("")
    monkeypatch.setattr(storyflow, "__file__", str(copy))
    assert versions.checkout() == {
        "storyflow commit": "unknown",
        "storyflow uncommitted changes": "unknown",
    }
    (tmp_path / "src" / "storyflow").mkdir(parents=True)  # a checkout's shape, but no git
    monkeypatch.setattr(storyflow, "__file__", str(tmp_path / "src" / "storyflow" / "x.py"))
    assert set(versions.checkout().values()) == {"unknown"}


def test_the_rule_writes_the_record_and_stops_on_another_storyflow(tmp_path: Path) -> None:
    """scripts/record_run.py as Snakemake runs it: results/run.csv, read back as its table; a
    run planned by another storyflow version stops with the message, and writes nothing."""
    from types import SimpleNamespace

    from conftest import run_script

    from storyflow import tables

    out = tmp_path / "run.csv"
    run_script("record_run", params=SimpleNamespace(versions=versions.planned()),
               output=SimpleNamespace(table=str(out)))  # fmt: skip
    record = tables.read(tables.RUN_RECORD, out)
    assert record.set_index("component").loc["storyflow", "version"] == storyflow.__version__
    other = tmp_path / "other.csv"
    planned_elsewhere = {**versions.planned(), "storyflow": "9.9.9"}
    with pytest.raises(SystemExit):
        run_script("record_run", params=SimpleNamespace(versions=planned_elsewhere),
                   output=SimpleNamespace(table=str(other)))  # fmt: skip
    assert not other.exists()


def test_the_run_record_is_a_final_output_rewritten_only_by_a_version() -> None:
    """Rule record_run takes the planning process's versions as its params (a new version of
    storyflow or of a recorded library rewrites the record, nothing else does) and rule all
    asks for it."""
    from conftest import schema_defaults

    from storyflow import plan

    rule = (REPO / "workflow" / "rules" / "models" / "provenance.smk").read_text()
    block = rule[rule.index("rule record_run:") :]
    assert re.search(r"params:\n\s+versions=RUN_VERSIONS,\n", block)
    assert "input:" not in block  # no input: nothing upstream re-runs it
    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert "RUN_VERSIONS = versions.planned()" in common
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert plan.layout.RUN_RECORD in plan.final_outputs(schema_defaults(default))
