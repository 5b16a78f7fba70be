"""Rule correlate_measures: Spearman's rho between a corpus's measures, and given its length."""

from pathlib import Path

from storyflow import tables
from storyflow.comparison.correlation import correlations
from storyflow.runner import run


def main(smk):
    table = tables.read(tables.STORY_TABLE, smk.input.table)
    result = correlations(
        table,
        length=smk.params.length,
        n_resamples=smk.params.bootstrap,
        confidence=smk.params.confidence,
        seed=smk.params.seed,
        verdicts=tables.read(tables.MEASURE_VERDICTS, smk.input.verdicts),
    )
    Path(smk.output.table).parent.mkdir(parents=True, exist_ok=True)
    result.to_csv(smk.output.table, index=False)


run(main, snakemake)
