"""The repository's own style gates: ruff, snakefmt, Snakemake's linter and mypy must be clean.

mypy checks src/storyflow with pyproject.toml's [tool.mypy] settings; its cache is
``.mypy_cache`` (ignored by git), so a run after the first reads only the files that changed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        [str(BIN / "ruff"), "check", "."],
        [str(BIN / "ruff"), "format", "--check", "."],
        [str(BIN / "snakefmt"), "--check", "Snakefile", "workflow"],
        # the README's command as written: the default config, no data needed to lint
        # (tests/test_no_data.py lints from a folder with none beside it)
        [sys.executable, "-m", "snakemake", "--lint"],
        [str(BIN / "mypy")],
    ],
    ids=["ruff-check", "ruff-format", "snakefmt", "snakemake-lint", "mypy"],
)
def test_style_gate(command: list[str]) -> None:
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    if "--lint" in command:
        assert "Congratulations" in output, output
