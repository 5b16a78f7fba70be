"""The NLL stage of a config priced per model before its models are downloaded: tokens and hours.

    .venv/bin/python tools/estimate_nll_stage.py RUN_DIR CONFIG [CONFIG ...] \\
        --stand-in GGUF [--stand-in MODEL=GGUF ...] [--window MODEL=TOKENS ...]

RUN_DIR holds the corpus stage of a run of the config (``results/<corpus>/corpus/``: stories and
sentences, e.g. ``snakemake --configfile CONFIG results/hippocorpus/corpus/sentences.parquet``),
CONFIG its config files in order. For every sequentiality model of the config and every corpus
of the analysis, the NLL stage is planned as rule ``plan_nll`` plans it
(``storyflow.lm.nll.engine.plan_corpus``: the config's ``nll`` settings, the model's prompt mode)
with the tokenizer of a stand-in GGUF: ``--stand-in GGUF`` for every model, ``MODEL=GGUF`` for
one (the plan depends on token counts only, so a tokenizer of a similar vocabulary gives about
the model's counts; the model's own gives them exactly, and the run's ``nll_estimate.csv`` does,
once the weights are there). ``--window MODEL=TOKENS`` gives a model's training window where it
is shorter than the stand-in's (GPT-2: 1024), so that its plan reads long stories from windows
of that size.

Prints, per model: stories and passes, planned tokens (each prefix once: what rule
``estimate_nll_time`` prices), the tokens a packed transformers run evaluates (each pass with its
prefix: what the measured rates count, docs/engine.md) and the hours at ``nll.tokens_per_second``
(one rate or one per model) for both.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import pandas as pd
import yaml
from snakemake.utils import update_config

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from storyflow import config_files, tables  # noqa: E402
from storyflow.lm.connect import open_model  # noqa: E402
from storyflow.lm.nll.cost import format_duration  # noqa: E402
from storyflow.lm.nll.engine import NllSettings, plan_corpus  # noqa: E402
from storyflow.lm.specs import model_specs  # noqa: E402
from storyflow.plan import corpus as corpus_plan  # noqa: E402
from storyflow.plan import sequentiality as sequentiality_plan  # noqa: E402
from storyflow.plan.layout import fill  # noqa: E402


def merged_config(paths: list[str]) -> dict:
    """The config files merged in order, validated, the schema's defaults filled."""
    config: dict = {}
    for path in paths:
        update_config(config, yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})
    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"
    problem = config_files.schema_problem(config, schema)
    if problem:
        sys.exit(f"config: {problem}")
    return config


def pairs(values: list[str], what: str) -> dict[str, str]:
    """``MODEL=VALUE`` arguments as a map; a bare value is the default (key "")."""
    out = {}
    for value in values:
        key, _, given = value.rpartition("=")
        if not given:
            sys.exit(f"{what}: {value!r} is neither VALUE nor MODEL=VALUE")
        out[key] = given
    return out


def plan_model(run: Path, config: dict, spec: object, stand_in: str, window: int | None) -> dict:
    """Stories, passes, planned and evaluated tokens of one model over every corpus."""
    model = open_model(spec, stand_in)  # the tokenizer only: plan_corpus loads no weights
    totals = {"stories": 0, "passes": 0, "planned": 0, "evaluated": 0}
    for corpus in sequentiality_plan.corpora(config):
        block = sequentiality_plan.nll_settings(config, corpus, spec)
        if window:
            block["max_context_tokens"] = min(block["max_context_tokens"], window)
        stories = tables.read(tables.STORIES, run / fill(corpus_plan.STORIES, corpus=corpus))
        sentences = tables.read(tables.SENTENCES, run / fill(corpus_plan.SENTENCES, corpus=corpus))
        if "topic" not in stories:
            stories = stories.assign(topic=None)
        plan = plan_corpus(model, stories, sentences, NllSettings.from_config(block))
        cost = plan.cost
        totals["stories"] += int(cost["story_id"].nunique())
        totals["passes"] += int(cost["passes"].sum())
        totals["planned"] += int(cost["planned_tokens"].sum())
        again = (cost["passes"] - 1) * cost["prefix_tokens"]  # each pass's prefix after the first
        totals["evaluated"] += int((cost["planned_tokens"] + again).sum())
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the folder holding the run's corpus stage")
    parser.add_argument("configs", nargs="+", help="the config files, in order")
    parser.add_argument("--stand-in", action="append", default=[], help="[MODEL=]GGUF")
    parser.add_argument("--window", action="append", default=[], help="MODEL=TOKENS")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = merged_config(args.configs)
    stand_ins = pairs(args.stand_in, "--stand-in")
    windows = {k: int(v) for k, v in pairs(args.window, "--window").items()}
    specs = model_specs(config["models"])
    rates = sequentiality_plan.nll_throughput(config)["tokens_per_second"]
    rows = []
    for name in sequentiality_plan.models(config):
        stand_in = stand_ins.get(name) or stand_ins.get("")
        if stand_in is None:
            sys.exit(f"model {name}: give its tokenizer, --stand-in {name}=GGUF or --stand-in GGUF")
        got = plan_model(args.run, config, specs[name], stand_in, windows.get(name))
        rate = rates.get(name)
        rows.append(
            {
                "model": name,
                **got,
                "tokens/s": rate,
                "planned h": got["planned"] / rate / 3600 if rate else float("nan"),
                "evaluated h": got["evaluated"] / rate / 3600 if rate else float("nan"),
            }
        )
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda x: f"{x:,.2f}"))
    total = table["evaluated h"].sum(min_count=1)
    if pd.notna(total):
        print(f"all models: {format_duration(total * 3600)} at the rates above (evaluated tokens)")


if __name__ == "__main__":
    main()
