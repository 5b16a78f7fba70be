"""Rule build_story_table: every measure's story scores of a corpus in one table, with units."""

import pandas as pd

from storyflow import tables
from storyflow.comparison.story_table import measure_units, story_table
from storyflow.comparison.verdicts import measure_verdicts
from storyflow.plan.registry import verdict_rules
from storyflow.runner import run, save


def main(smk):
    stories = tables.read(tables.STORIES, smk.input.stories)
    sentences = tables.read(tables.SENTENCES, smk.input.sentences)
    measures = [tables.read(tables.STORY_MEASURES, path) for path in smk.input.measures]
    validity = tables.read(tables.VALIDITY, smk.input.validity)
    verdicts = measure_verdicts(
        pd.concat(measures, ignore_index=True), validity, smk.wildcards.corpus, verdict_rules()
    )
    table = story_table(stories, sentences, measures, verdicts)
    table.to_parquet(smk.output.table, index=False)
    units = measure_units(pd.concat(measures, ignore_index=True), stories)
    save(smk.output, units=units, verdicts=verdicts)


run(main, snakemake)
