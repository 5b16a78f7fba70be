"""Rule plot_replication: one paper's published figures and ours, with our intervals."""

from storyflow import tables
from storyflow.figures.replication import plot_replication
from storyflow.runner import run


def main(smk):
    table = tables.read(tables.REPLICATION, smk.input.table)
    plot_replication(table, [smk.output.png, smk.output.pdf], dpi=smk.params.dpi)


run(main, snakemake)
