"""Rule score_nll_shard: per-sentence NLL, every history size and formulation, one shard."""

import pandas as pd

from storyflow.runner import run
from storyflow.scoring import NllSettings, score_corpus, select_shard


def main(smk):
    settings = NllSettings.from_config(smk.params.settings, threads=smk.threads)
    stories = select_shard(
        pd.read_parquet(smk.input.stories), int(smk.wildcards.shard), smk.params.n_shards
    )
    table = score_corpus(
        model_name=smk.wildcards.model,
        model_path=smk.input.gguf,
        stories=stories,
        sentences=pd.read_parquet(smk.input.sentences),
        settings=settings,
    )
    table.to_parquet(smk.output.nll, index=False)


run(main, snakemake)
