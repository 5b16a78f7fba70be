"""Rule sample_endings: K endings per cut from the forecaster (one batch per cut)."""

from pathlib import Path

from storyflow import tables
from storyflow.lm.registry import ModelSpec
from storyflow.measures.tension.forecast import forecast_cuts
from storyflow.runner import run


def main(smk):
    p = smk.params
    spec = ModelSpec.from_config({**p.model, "source": {"path": smk.input.gguf}})
    cuts = tables.read(tables.TENSION_CUTS, smk.input.cuts)
    endings = forecast_cuts(spec, smk.input.gguf, cuts, p.k, p.sampling, p.prompts, smk.threads)
    Path(smk.output.endings).parent.mkdir(parents=True, exist_ok=True)
    endings.to_parquet(smk.output.endings, index=False)


run(main, snakemake)
