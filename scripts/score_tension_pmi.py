"""Rule score_tension_pmi: PMI of the remainder with the prefix at every cut (nats/token)."""

from storyflow import tables
from storyflow.lm.connect import job_spec, open_model
from storyflow.measures.tension.likelihood import score_pmi
from storyflow.runner import run


def main(smk):
    model = open_model(
        job_spec(smk.params.model, smk.config["models"]), smk.input.gguf, n_threads=smk.threads
    )
    pmi = score_pmi(
        model,
        tables.read(tables.TENSION_CUTS, smk.input.cuts),
        tables.read(tables.SENTENCES, smk.input.sentences),
    )
    pmi.to_parquet(smk.output.pmi, index=False)


run(main, snakemake)
