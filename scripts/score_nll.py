"""Rule score_nll_shard: per-sentence NLL, every history size and formulation, one shard."""

import pandas as pd

from storyflow.lm.prompts import prompt_mode
from storyflow.runner import run
from storyflow.lm.nll.engine import NllSettings, score_corpus, select_shard


def model_spec(smk):
    """The model's config entry: from params when the rule passes it, else from the config."""
    spec = getattr(smk.params, "model", None)
    if spec:
        return spec
    return next(m for m in smk.config["models"] if m["name"] == smk.wildcards.model)


def main(smk):
    settings = NllSettings.from_config(smk.params.settings, threads=smk.threads)
    stories = select_shard(
        pd.read_parquet(smk.input.stories), int(smk.wildcards.shard), smk.params.n_shards
    )
    spec = model_spec(smk)
    table = score_corpus(
        model_name=smk.wildcards.model,
        model_path=smk.input.gguf,
        stories=stories,
        sentences=pd.read_parquet(smk.input.sentences),
        settings=settings,
        prompt=prompt_mode(spec),
        backend=spec.get("backend") or "llama.cpp",
        dtype=spec.get("dtype") or "float32",
    )
    table.to_parquet(smk.output.nll, index=False)


run(main, snakemake)
