"""Rule plot_measure_correlations: heat maps of the correlations between a corpus's measures."""

from storyflow import tables
from storyflow.figures.comparison import plot_correlations
from storyflow.runner import run


def main(smk):
    correlations = tables.read(tables.MEASURE_CORRELATIONS, smk.input.table)
    plot_correlations(
        correlations, [smk.output.png, smk.output.pdf], length=smk.params.length, dpi=smk.params.dpi
    )


run(main, snakemake)
