"""Rule answer_fabula_questions: P(yes) of one reader model for every question of a corpus."""

from storyflow import tables
from storyflow.lm.connect import job_model_spec
from storyflow.measures.fabula_entropy.readers import answer_corpus
from storyflow.runner import run, save


def main(smk):
    answers, cost = answer_corpus(
        job_model_spec(smk),
        smk.input.get("weights"),
        tables.read(tables.FEI_VERSIONS, smk.input.versions),
        tables.read(tables.FEI_QUESTIONS, smk.input.questions),
        smk.params.reading,
        n_threads=smk.threads,
    )
    save(smk.output, answers=answers, cost=cost)


run(main, snakemake)
