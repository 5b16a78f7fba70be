"""Rule compute_measure_separation: Hedges' g of every measure for every contrast of a corpus."""

from storyflow import tables
from storyflow.comparison.separation import corpus_contrasts, separation
from storyflow.runner import run


def main(smk):
    table = tables.read(tables.STORY_TABLE, smk.input.table)
    contrasts = corpus_contrasts(
        smk.wildcards.corpus, smk.params.contrasts, sorted(table["story_type"].unique())
    )
    units = tables.read(tables.MEASURE_UNITS, smk.input.units)
    model_free = units.loc[units["models"].fillna("") == "", "measure"].tolist()
    result = separation(
        table,
        contrasts,
        model_free=model_free,
        confidence=smk.params.confidence,
        min_group_size=smk.params.min_group_size,
        verdicts=tables.read(tables.MEASURE_VERDICTS, smk.input.verdicts),
    )
    result.to_csv(smk.output.table, index=False)


run(main, snakemake)
