"""The repository's own style gates: ruff, snakefmt and Snakemake's linter must be clean."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA_MIRROR, REPO

BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        [str(BIN / "ruff"), "check", "."],
        [str(BIN / "ruff"), "format", "--check", "."],
        [str(BIN / "snakefmt"), "--check", "Snakefile", "workflow"],
        [
            sys.executable,
            "-m",
            "snakemake",
            "--lint",
            "--configfile",
            "tests/config/tiny.yaml",
            "--config",
            "data=" + json.dumps({"mirror": str(DATA_MIRROR)}),
        ],
    ],
    ids=["ruff-check", "ruff-format", "snakefmt", "snakemake-lint"],
)
def test_style_gate(command: list[str]) -> None:
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    if "--lint" in command:
        assert "Congratulations" in output, output
