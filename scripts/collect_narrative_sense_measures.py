"""Rule collect_narrative_sense_measures: narrative-sense scores as the comparison's story
measures."""

from storyflow import tables
from storyflow.measures.narrative_sense.pmi import story_measures
from storyflow.runner import run


def main(smk):
    scores = tables.read(tables.PAIR_SCORES, smk.input.scores)
    story_measures(scores).to_parquet(smk.output.measures, index=False)


run(main, snakemake)
