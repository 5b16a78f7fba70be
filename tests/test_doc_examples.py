"""The docs' config examples are configs the schema accepts, and the tutorials name the packaged
models as the quick start does (issue 66): an example a reader copies runs, or is refused, as
the page says."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from storyflow.config_files import load_schema, schema_problem

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
PAGES = [REPO / "README.md", REPO / "config" / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)
#: Words that mark a block as a sketch to fill in, not a config to copy as it is.
PLACEHOLDERS = ("<", "…", "...")


def config_blocks() -> list[tuple[str, dict]]:
    """Every YAML block of the pages that is a config or a part of one at the top level: a
    mapping whose keys are all config keys (a profile, a model entry alone or an indented part
    is not)."""
    keys = set(load_schema(SCHEMA)["properties"])
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for i, match in enumerate(BLOCK.finditer(text)):
            block = match.group(1)
            if block.startswith(" ") or any(p in block for p in PLACEHOLDERS):
                continue
            try:
                parsed = yaml.safe_load(block)
            except yaml.YAMLError:
                continue
            if isinstance(parsed, dict) and parsed and set(parsed) <= keys:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{page.relative_to(REPO)}:{line} (block {i})", parsed))
    return found


def test_the_pages_hold_config_examples() -> None:
    where = {name.split(":")[0] for name, _ in config_blocks()}
    assert {"README.md", "docs/tutorials/your_own_stories.md"} <= where, where


@pytest.mark.parametrize(("where", "block"), config_blocks(), ids=lambda x: str(x)[:60])
def test_each_config_example_is_valid_over_the_default(where: str, block: dict, default_config):
    """The block over the default config (as a --configfile is merged) passes the schema."""
    merged = copy.deepcopy(default_config)
    for key, value in block.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    assert schema_problem(merged, SCHEMA) is None, where


def _models_of(page: Path) -> dict[str, dict]:
    names = {}
    for match in BLOCK.finditer(page.read_text(encoding="utf-8")):
        try:
            parsed = yaml.safe_load(match.group(1))
        except yaml.YAMLError:
            continue
        entries = parsed.get("models") if isinstance(parsed, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and "name" in entry:
                names[entry["name"]] = entry
    return names


def test_the_tutorials_name_the_packaged_models_as_the_quick_start_does() -> None:
    """A tutorial that copies the quick start's model under another name would re-score it."""
    readme = REPO / "README.md"
    quick = re.search(r"models: \[\{name: (\w+),.*package: ([\w-]+)\}", readme.read_text())
    assert quick, "the quick start names a packaged model"
    name, package = quick.groups()
    for page in sorted((REPO / "docs" / "tutorials").glob("*.md")):
        for other, entry in _models_of(page).items():
            if (entry.get("source") or {}).get("package") == package:
                assert other == name, f"{page.name} names {package} {other!r}, not {name!r}"
