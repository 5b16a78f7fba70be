"""Rule plan_nll: the NLL stage's cost for one corpus and model, known before it is spent.

Tokenizes every story with the model's tokenizer (no weights), plans its forward passes, logs the
plan (planned tokens, stories left out and why) and writes the cost table and the stories left
out; rule estimate_nll_time turns the plans into expected time.
"""

from storyflow import tables
from storyflow.lm.connect import job_model_spec, scoring_source
from storyflow.lm.nll.engine import NllSettings, plan_corpus
from storyflow.runner import run, save


def main(smk):
    spec = job_model_spec(smk)
    plan = plan_corpus(
        model_name=smk.wildcards.model,
        model_path=scoring_source(spec, getattr(smk.input, "weights", None)),
        stories=tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "topic"]),
        sentences=tables.read(tables.SENTENCES, smk.input.sentences),
        settings=NllSettings.from_config(smk.params.settings),
        prompt=spec.prompt,
    )
    save(smk.output, cost=plan.cost, excluded=plan.excluded)


run(main, snakemake)
