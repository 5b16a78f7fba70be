"""Rule score_nll_shard: per-sentence NLL, every history size and formulation, one shard.

Stories the plan leaves out (over nll.max_story_tokens, or with a sentence longer than the
context window) are logged here and listed by rule plan_nll (docs/cost_and_failures.md).
"""

from storyflow import tables
from storyflow.lm.connect import job_model_spec, scoring_source
from storyflow.lm.nll.engine import NllSettings, score_corpus, select_shard
from storyflow.runner import run


def main(smk):
    spec = job_model_spec(smk)
    stories = tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "topic"])
    table = score_corpus(
        model_name=smk.wildcards.model,
        model_path=scoring_source(spec, getattr(smk.input, "weights", None)),
        stories=select_shard(stories, int(smk.wildcards.shard), smk.params.n_shards),
        sentences=tables.read(tables.SENTENCES, smk.input.sentences),
        settings=NllSettings.from_config(smk.params.settings, threads=smk.threads),
        prompt=spec.prompt,
        backend=spec.backend,
        dtype=spec.dtype,
        served=spec if spec.served else None,
    )
    table.to_parquet(smk.output.nll, index=False)


run(main, snakemake)
