"""A stand-in for the ``conda`` command, for tests/test_envs.py: Snakemake's conda deployment runs
to its call of conda (``conda env create --file <its copy> --prefix <env>``), and this answers it
as conda would up to the network. It answers Snakemake's checks (``conda --version``, ``conda
info --json``, ``conda config --get channel_priority --json``); for ``env create`` it records the
file Snakemake handed over, then does what conda's pip installer does before calling pip: writes
the file's pip requirements to a temporary requirements file in that file's folder and runs pip
from there (``pip install -U -r <that file>``, cwd the folder: conda/env/installers/pip.py). Here
pip only parses it, with pip's own parser, and records every requirement and every file or folder
it would open; nothing is downloaded or built (``conda clean``, which Snakemake calls after a
creation, does nothing). Each call appends a JSON line to
``$FAKE_CONDA_LOG``; ``$FAKE_CONDA_PYTHON`` is the Python whose pip parses."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

#: Run by $FAKE_CONDA_PYTHON in the folder of the copy: pip's parser on the requirements file.
PARSE = r"""
import json, os, sys
from pip._internal.network.session import PipSession
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._internal.req.req_file import parse_requirements
found = []
for parsed in parse_requirements(sys.argv[1], session=PipSession()):
    req = install_req_from_parsed_requirement(parsed)
    link = req.link
    found.append({
        "line": parsed.requirement,
        "from": parsed.comes_from,
        "name": req.name,
        "editable": bool(parsed.is_editable),
        "path": link.file_path if link is not None and link.is_file else None,
    })
print(json.dumps(found))
"""


def log(entry: dict) -> None:
    with open(os.environ["FAKE_CONDA_LOG"], "a") as out:
        out.write(json.dumps(entry) + "\n")


def create(args: list[str]) -> None:
    """``conda env create ... --file X --prefix P``: what conda does up to pip, then an empty
    environment at P."""
    import yaml

    copy = Path(args[args.index("--file") + 1])
    prefix = Path(args[args.index("--prefix") + 1])
    env = yaml.safe_load(copy.read_text())
    pip = next((d["pip"] for d in env["dependencies"] if isinstance(d, dict)), [])
    folder = copy.resolve().parent  # conda: pip_workdir = op.dirname(op.abspath(file))
    with tempfile.NamedTemporaryFile(
        "w", prefix="condaenv.", suffix=".requirements.txt", dir=folder, delete=False
    ) as requirements:
        requirements.write("\n".join(pip))
    try:
        parsed = subprocess.run(
            [os.environ["FAKE_CONDA_PYTHON"], "-c", PARSE, requirements.name],
            cwd=folder, capture_output=True, text=True, check=False,
        )  # fmt: skip
    finally:
        os.remove(requirements.name)
    log({
        "call": "env create", "file": str(copy), "cwd": os.getcwd(), "pip_cwd": str(folder),
        "pip": pip, "parsed": json.loads(parsed.stdout) if parsed.returncode == 0 else None,
        "pip_error": parsed.stderr[-2000:] if parsed.returncode else "",
    })  # fmt: skip
    (prefix / "conda-meta").mkdir(parents=True, exist_ok=True)


def main(args: list[str]) -> None:
    if args == ["--version"]:
        print("conda 25.1.1")
    elif args[:2] == ["info", "--json"]:
        print(json.dumps({"conda_prefix": os.environ.get("FAKE_CONDA_PREFIX", "/opt/conda"),
                          "platform": "linux-64", "conda_version": "25.1.1"}))  # fmt: skip
    elif args[:3] == ["config", "--get", "channel_priority"]:
        print(json.dumps({"get": {"channel_priority": "strict"}, "rc_path": "", "success": True}))
    elif args[:2] == ["env", "create"]:
        create(args)
    elif args[:1] == ["clean"]:  # Snakemake's package cleanup after a creation: nothing to do
        log({"call": "clean"})
    else:
        log({"call": shlex.join(args)})
        sys.exit(f"fake conda: {shlex.join(args)} is not part of the test")


if __name__ == "__main__":
    main(sys.argv[1:])
