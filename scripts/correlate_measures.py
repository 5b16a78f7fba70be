"""Rule correlate_measures: Spearman's rho between a corpus's measures, and given its length."""

from storyflow import tables
from storyflow.comparison.correlation import correlations
from storyflow.runner import run


def main(smk):
    table = tables.read(tables.STORY_TABLE, smk.input.table)
    result = correlations(
        table,
        **smk.params.interval,
        length=smk.params.length,
        verdicts=tables.read(tables.MEASURE_VERDICTS, smk.input.verdicts),
    )
    result.to_csv(smk.output.table, index=False)


run(main, snakemake)
