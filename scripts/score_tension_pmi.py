"""Rule score_tension_pmi: PMI of the remainder with the prefix at every cut (nats/token)."""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.measures.tension.likelihood import score_pmi
from storyflow.runner import run


def main(smk):
    model = open_job_model(smk)
    pmi = score_pmi(
        model,
        tables.read(tables.TENSION_CUTS, smk.input.cuts),
        tables.read(tables.SENTENCES, smk.input.sentences),
    )
    pmi.to_parquet(smk.output.pmi, index=False)


run(main, snakemake)
