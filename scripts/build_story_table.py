"""Rule build_story_table: every measure's story scores of a corpus in one table, with units."""

from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.comparison.story_table import measure_units, story_table
from storyflow.comparison.verdicts import measure_verdicts
from storyflow.runner import run


def main(smk):
    stories = tables.read(tables.STORIES, smk.input.stories)
    sentences = tables.read(tables.SENTENCES, smk.input.sentences)
    measures = [tables.read(tables.STORY_MEASURES, path) for path in smk.input.measures]
    validity = tables.read(tables.VALIDITY, smk.input.validity)
    verdicts = measure_verdicts(
        pd.concat(measures, ignore_index=True), validity, smk.wildcards.corpus
    )
    table = story_table(stories, sentences, measures, verdicts)
    for path in smk.output:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(smk.output.table, index=False)
    units = measure_units(pd.concat(measures, ignore_index=True), stories)
    units.to_csv(smk.output.units, index=False)
    verdicts.to_csv(smk.output.verdicts, index=False)


run(main, snakemake)
