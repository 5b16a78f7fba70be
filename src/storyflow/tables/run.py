"""The run record (``results/run.csv``): what the run ran with (:mod:`storyflow.versions`)."""

from __future__ import annotations

from storyflow.tables.base import Table

RUN_RECORD = Table(
    "run record",
    {"component": "object", "version": "object", "decides": "object"},
    key=("component",),
    doc="One row per component the run ran with: storyflow (its version, as CITATION.cff and "
    "CHANGELOG.md state it), the git commit of the storyflow checkout that planned the run and "
    "whether it had uncommitted changes (yes, no; 'unknown' when storyflow is no git checkout), "
    "python, and the libraries that decide its numbers or run it; version: the version "
    "installed in the job's environment ('not installed' when absent), the commit, or yes/no; "
    "decides: what the component decides in a run.",
)
