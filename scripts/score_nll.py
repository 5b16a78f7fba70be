"""Rule score_nll_shard: per-sentence NLL, every history size and formulation, one shard.

The shard's cost plan (planned tokens per story and formulation) and the stories it leaves out
(over nll.max_story_tokens, or with a sentence longer than the context window) are logged before
scoring; they are also written as CSV tables when the rule declares the outputs ``cost`` and
``excluded`` (docs/cost_and_failures.md).
"""

import pandas as pd

from storyflow.lm.nll.engine import NllSettings, run_corpus, select_shard
from storyflow.lm.prompts import prompt_mode
from storyflow.runner import run


def model_spec(smk):
    """The model's config entry: from params when the rule passes it, else from the config."""
    spec = getattr(smk.params, "model", None)
    if spec:
        return spec
    return next(m for m in smk.config["models"] if m["name"] == smk.wildcards.model)


def write_plan(smk, plan):
    """The cost and excluded tables, when the rule declares them (written before scoring)."""
    for name, frame in (("cost", plan.cost), ("excluded", plan.excluded)):
        path = getattr(smk.output, name, None)
        if path:
            frame.to_csv(path, index=False)


def nll_config(smk):
    """The rule's NLL settings, plus nll.tokens_per_second from the config when the params lack it.

    The rate only feeds the logged time estimate: read from the config, not the params, so that
    changing it does not make Snakemake re-run the shards.
    """
    cfg = dict(smk.params.settings)
    config = getattr(smk, "config", None) or {}
    cfg.setdefault("tokens_per_second", config.get("nll", {}).get("tokens_per_second"))
    return cfg


def main(smk):
    settings = NllSettings.from_config(nll_config(smk), threads=smk.threads)
    stories = select_shard(
        pd.read_parquet(smk.input.stories), int(smk.wildcards.shard), smk.params.n_shards
    )
    spec = model_spec(smk)
    result = run_corpus(
        model_name=smk.wildcards.model,
        model_path=smk.input.gguf,
        stories=stories,
        sentences=pd.read_parquet(smk.input.sentences),
        settings=settings,
        prompt=prompt_mode(spec),
        backend=spec.get("backend") or "llama.cpp",
        dtype=spec.get("dtype") or "float32",
        on_plan=lambda plan: write_plan(smk, plan),
    )
    result.nll.to_parquet(smk.output.nll, index=False)
    if result.cost.empty and result.excluded.empty:  # an empty shard: no plan was made
        write_plan(smk, result)


run(main, snakemake)
