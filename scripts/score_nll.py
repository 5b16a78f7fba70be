"""Rule score_nll_shard: per-sentence NLL, every history size and formulation, one shard."""

import pandas as pd

from storyflow.lm.nll.engine import NllSettings, score_corpus, select_shard
from storyflow.lm.registry import ModelSpec
from storyflow.runner import run


def main(smk):
    settings = NllSettings.from_config(smk.params.settings, threads=smk.threads)
    stories = select_shard(
        pd.read_parquet(smk.input.stories), int(smk.wildcards.shard), smk.params.n_shards
    )
    spec = ModelSpec.from_config(smk.params.model)
    table = score_corpus(
        model_name=smk.wildcards.model,
        model_path=smk.input.gguf,
        stories=stories,
        sentences=pd.read_parquet(smk.input.sentences),
        settings=settings,
        prompt=spec.prompt,
        backend=spec.backend,
        dtype=spec.dtype,
    )
    table.to_parquet(smk.output.nll, index=False)


run(main, snakemake)
