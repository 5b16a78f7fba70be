"""The dry run's predicted NLL minutes against the run's planned tokens and its actual minutes.

    .venv/bin/python benchmarks/nll_minutes.py RUN_DIR CONFIG [CONFIG ...]

RUN_DIR is the folder a study ran in (its ``results/`` and ``logs/``), CONFIG its config files
in order (relative paths in them are read from RUN_DIR, as snakemake read them). For every
corpus of the user's and every scoring model it prints: the tokens and minutes that
``snakemake -n`` predicted from words (``storyflow.plan.nll_minutes``), the tokens the run
planned with the model's tokenizer (``nll_cost/<model>.csv``), the minutes its scoring jobs
took (``score_nll_shard`` logs: "finished in N s", summed over shards) and the ratios. Timings
are only as good as the run: a run that shared its cores is slower than the prediction.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tools"))

from estimate_nll_stage import merged_config  # noqa: E402

from storyflow import tables  # noqa: E402
from storyflow.plan import sequentiality  # noqa: E402
from storyflow.plan.layout import fill  # noqa: E402
from storyflow.plan.nll_minutes import predictions  # noqa: E402

FINISHED = re.compile(r"rule score_nll_shard finished in ([0-9.]+) s")


def scoring_seconds(run: Path, corpus: str, model: str) -> float:
    """The seconds the model's scoring shards of ``corpus`` took, from their logs."""
    logs = run / "logs" / corpus / "sequentiality" / "score_nll_shard" / model
    found = [FINISHED.findall(p.read_text()) for p in sorted(logs.glob("*.log"))]
    return sum(float(s[-1]) for s in found if s) if any(found) else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("configs", nargs="+")
    args = parser.parse_args()
    run = args.run.resolve()
    config = merged_config([str(Path(c).resolve()) for c in args.configs])
    os.chdir(run)
    rows = []
    for corpus, found in predictions(config).items():
        for p in found:
            cost = tables.read(
                tables.NLL_COST,
                run / fill(sequentiality.NLL_COST, corpus=corpus, model=p.model),
            )
            planned = int(cost["planned_tokens"].sum())
            actual = scoring_seconds(run, corpus, p.model) / 60
            rows.append(
                {
                    "corpus": corpus,
                    "model": p.model,
                    "stories": p.stories,
                    "predicted tokens": p.tokens,
                    "planned tokens": planned,
                    "tokens pred/planned": p.tokens / planned,
                    "predicted min": p.minutes,
                    "actual min": actual,
                    "min pred/actual": (p.minutes or float("nan")) / actual,
                    "actual tokens/s": planned / (actual * 60),
                }
            )
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:,.3g}"))


if __name__ == "__main__":
    main()
