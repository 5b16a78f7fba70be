"""Rule plan_tension_cuts: where each story is cut (the forecaster's tokens; words for a served
model without a tokenizer file) and which stories are left out."""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.measures.tension.cuts import CutSettings, plan_cuts
from storyflow.runner import run, save


def main(smk):
    model = open_job_model(smk)
    cuts, excluded = plan_cuts(
        tables.read(tables.STORIES, smk.input.stories),
        tables.read(tables.SENTENCES, smk.input.sentences),
        model.count_text,
        CutSettings.from_config(smk.params.cuts),
        model.name,
        model.token_unit,
    )
    save(smk.output, cuts=cuts, excluded=excluded)


run(main, snakemake)
