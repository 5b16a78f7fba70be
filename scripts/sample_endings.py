"""Rule sample_endings: K endings per cut from the forecaster (one batch per cut)."""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.measures.tension.forecast import forecast_cuts
from storyflow.runner import run


def main(smk):
    p = smk.params
    model = open_job_model(smk)
    cuts = tables.read(tables.TENSION_CUTS, smk.input.cuts)
    endings = forecast_cuts(model, cuts, p.k, p.sampling, p.prompts)
    endings.to_parquet(smk.output.endings, index=False)


run(main, snakemake)
