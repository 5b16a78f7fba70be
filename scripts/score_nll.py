"""Rule score_nll: per-sentence NLL for every history size and formulation, one corpus x model."""

import pandas as pd

from storyflow.runner import run
from storyflow.scoring import NllSettings, score_corpus


def main(smk):
    settings = NllSettings.from_config(smk.params.settings, threads=smk.threads)
    table = score_corpus(
        model_name=smk.wildcards.model,
        model_path=smk.input.gguf,
        stories=pd.read_parquet(smk.input.stories),
        sentences=pd.read_parquet(smk.input.sentences),
        settings=settings,
    )
    table.to_parquet(smk.output.nll, index=False)


run(main, snakemake)
