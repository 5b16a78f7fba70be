"""Rule plan_nll: the NLL stage's cost for one corpus and model, known before it is spent.

Tokenizes every story with the model's tokenizer (no weights), plans its forward passes, logs the
plan (planned tokens, stories left out and why) and writes the cost table and the stories left
out; rule estimate_nll_time turns the plans into expected time.
"""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.lm.nll.engine import NllSettings, plan_corpus
from storyflow.runner import run, save


def main(smk):
    plan = plan_corpus(
        open_job_model(smk),
        tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "topic"]),
        tables.read(tables.SENTENCES, smk.input.sentences),
        NllSettings.from_config(smk.params.settings),
    )
    save(smk.output, cost=plan.cost, excluded=plan.excluded)


run(main, snakemake)
