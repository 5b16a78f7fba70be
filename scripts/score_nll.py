"""Rule score_nll_shard: per-sentence NLL, every history size and formulation, one shard.

Stories the plan leaves out (over nll.max_story_tokens, or with a sentence longer than the
context window) are logged here and listed by rule plan_nll (docs/cost_and_failures.md).
"""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.lm.nll.engine import NllSettings, score_corpus, select_shard
from storyflow.runner import run


def main(smk):
    stories = tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "topic"])
    table = score_corpus(
        open_job_model(smk),
        select_shard(stories, int(smk.wildcards.shard), smk.params.n_shards),
        tables.read(tables.SENTENCES, smk.input.sentences),
        NllSettings.from_config(smk.params.settings, threads=smk.threads),
    )
    table.to_parquet(smk.output.nll, index=False)


run(main, snakemake)
