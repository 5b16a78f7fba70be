"""Rule collect_sequentiality_measures: story sequentiality as the comparison's story measures."""

from storyflow import tables
from storyflow.measures.sequentiality.scores import story_measures
from storyflow.runner import run


def main(smk):
    stories = tables.read_all(tables.STORY_SEQUENTIALITY, smk.input.stories)
    story_measures(stories).to_parquet(smk.output.measures, index=False)


run(main, snakemake)
