"""The main job's record: the README's first command run from a clean clone, timed, and written
as `benchmarks/main_job.md` (the one place the docs quote the default run's time and cost).

    python3 benchmarks/main_job.py run FOLDER      # clone, install, run, time, write the record
    python3 benchmarks/main_job.py record FOLDER   # write the record of a finished FOLDER

`run` clones this checkout into FOLDER/main, links the data mirror beside it (FOLDER/shared ->
../shared of this checkout, as config/config.yaml expects), and runs the README's command
`./install.sh && .venv/bin/snakemake --cores all` in two timed steps; it writes FOLDER/timing.txt
(`install rc=R Ns`, `snakemake rc=R Ns total Ns`), the logs FOLDER/install.log and
FOLDER/snakemake.log, then the record. Run it alone: the NLL stage's rate falls by half or more
when anything shares the cores. `--out` writes the record elsewhere (default:
benchmarks/main_job.md of this checkout).

The record gives: the date, the machine (CPU model and cores), the commit, the exit codes and
wall times, the jobs Snakemake ran, and the language-model work the run planned, from its own
tables (results/<corpus>/sequentiality/tables/nll_estimate.csv: NLL tokens per model;
results/lm_cost.csv: prompt and generated tokens of the answer and sampling stages).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
COMMAND = "./install.sh && .venv/bin/snakemake --cores all"


def _timed(command: str, cwd: Path, log: Path) -> tuple[int, float]:
    """Exit code and wall seconds of ``command`` run with bash in ``cwd``, output to ``log``."""
    start = time.monotonic()
    with log.open("w") as out:
        code = subprocess.run(["bash", "-c", command], cwd=cwd, stdout=out, stderr=out).returncode
    return code, time.monotonic() - start


def run(folder: Path) -> None:
    """Clone, install and run the main job in ``folder``, writing its timing file and logs."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(REPO), str(folder / "main")], check=True)
    shared = folder / "shared"
    if not shared.exists():
        shared.symlink_to((REPO.parent / "shared").resolve())
    install, install_s = _timed("./install.sh", folder / "main", folder / "install.log")
    lines = [f"install rc={install} {install_s:.0f}s"]
    if install == 0:
        code, run_s = _timed(
            ".venv/bin/snakemake --cores all", folder / "main", folder / "snakemake.log"
        )
        lines.append(f"snakemake rc={code} {run_s:.0f}s total {install_s + run_s:.0f}s")
    (folder / "timing.txt").write_text("\n".join(lines) + "\n")


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


def _cpu() -> str:
    """The CPU model and the cores this machine gives."""
    model = platform.processor() or ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        found = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        model = found.group(1).strip() if found else model
    return f"{model or 'unknown CPU'}, {os.cpu_count()} cores"


def record(folder: Path, note: str = "") -> str:
    """The record of a finished ``folder`` (:func:`run`'s layout), as Markdown; ``note`` says
    what else ran on the machine meanwhile, if anything."""
    timing = (folder / "timing.txt").read_text()
    install = re.search(r"install rc=(\d+) (\d+)s", timing)
    job = re.search(r"snakemake rc=(\d+) (\d+)s total (\d+)s", timing)
    if install is None or job is None:
        raise SystemExit(f"{folder / 'timing.txt'}: no finished install and snakemake lines")
    log = (folder / "snakemake.log").read_text()
    steps = re.findall(r"(\d+) of (\d+) steps", log)
    done, total = steps[-1] if steps else ("?", "?")
    main = folder / "main"
    commit = subprocess.run(
        ["git", "-C", str(main), "log", "-1", "--format=%h %cs"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    finished = datetime.fromtimestamp((folder / "timing.txt").stat().st_mtime, UTC)
    estimates = sorted(main.glob("results/*/sequentiality/tables/nll_estimate.csv"))
    nll = pd.concat([pd.read_csv(p) for p in estimates])
    nll = nll.groupby("model")[["planned_tokens", "n_stories"]].sum()
    lm = pd.read_csv(main / "results" / "lm_cost.csv")
    lm = lm.groupby(["stage", "model"])[["requests", "prompt_tokens", "generated_tokens"]].sum()
    rows = [
        "# The main job's record",
        "",
        "The README's first command run from a clean clone in the steps of "
        "`benchmarks/main_job.py`.",
        "",
        *([note, ""] if note else []),
        "| what | value |",
        "|---|---|",
        f"| finished (UTC) | {finished:%Y-%m-%d %H:%M} |",
        f"| machine | {_cpu()}, no GPU |",
        f"| commit | {commit} |",
        f"| command | `{COMMAND}` |",
        f"| install | exit {install.group(1)}, {_minutes(float(install.group(2)))} |",
        f"| snakemake | exit {job.group(1)}, {done} of {total} jobs, "
        f"{_minutes(float(job.group(2)))} |",
        f"| total | {_minutes(float(job.group(3)))} |",
        "",
        "The language-model work it planned, from the run's own tables:",
        "",
        "| stage | model | stories or requests | tokens |",
        "|---|---|---|---|",
    ]
    for model, row in nll.iterrows():
        rows.append(
            f"| NLL scoring | {model} | {int(row['n_stories']):,} stories | "
            f"{int(row['planned_tokens']):,} |"
        )
    for (stage, model), row in lm.iterrows():
        tokens = int(row["prompt_tokens"]) + int(row["generated_tokens"])
        rows.append(f"| {stage} | {model} | {int(row['requests']):,} requests | {tokens:,} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("run", "record"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "main_job.md")
    parser.add_argument("--note", default="", help="what else ran meanwhile (a sentence)")
    args = parser.parse_args()
    if args.mode == "run":
        run(args.folder)
    text = record(args.folder, args.note)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
