"""Rule plot_measure_separation: forest plots of every measure's Hedges' g per contrast."""

from storyflow import tables
from storyflow.figures.comparison import plot_separation
from storyflow.runner import run


def main(smk):
    separation = tables.read(tables.MEASURE_SEPARATION, smk.input.table)
    plot_separation(separation, [smk.output.png, smk.output.pdf], dpi=smk.params.dpi)


run(main, snakemake)
