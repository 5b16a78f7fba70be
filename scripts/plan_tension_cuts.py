"""Rule plan_tension_cuts: where each story is cut (the forecaster's tokens; words for a served
model without a tokenizer file) and which stories are left out."""

from storyflow import tables
from storyflow.lm.connect import job_spec, open_model
from storyflow.measures.tension.cuts import CutSettings, plan_cuts
from storyflow.runner import run


def main(smk):
    model = open_model(job_spec(smk.params.model, smk.config["models"]), smk.input.get("gguf"))
    cuts, excluded = plan_cuts(
        tables.read(tables.STORIES, smk.input.stories),
        tables.read(tables.SENTENCES, smk.input.sentences),
        model.count_text,
        CutSettings(**smk.params.cuts),
        model.name,
        model.token_unit,
    )
    cuts.to_parquet(smk.output.cuts, index=False)
    excluded.to_csv(smk.output.excluded, index=False)


run(main, snakemake)
