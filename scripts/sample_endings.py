"""Rule sample_endings: K endings per cut from the forecaster (one batch per cut)."""

from storyflow import tables
from storyflow.lm.connect import job_spec, open_model
from storyflow.measures.tension.forecast import forecast_cuts
from storyflow.runner import run


def main(smk):
    p = smk.params
    model = open_model(
        job_spec(p.model, smk.config["models"]), smk.input.get("gguf"), n_threads=smk.threads
    )
    cuts = tables.read(tables.TENSION_CUTS, smk.input.cuts)
    endings = forecast_cuts(model, cuts, p.k, p.sampling, p.prompts)
    endings.to_parquet(smk.output.endings, index=False)


run(main, snakemake)
