"""Rule plot_tension_by_group: tension story statistics per group (means with CIs)."""

from storyflow import tables
from storyflow.figures.tension import plot_tension_by_group
from storyflow.runner import run


def main(smk):
    groups = tables.read(tables.TENSION_GROUPS, smk.input.groups)
    plot_tension_by_group(groups, list(smk.output), smk.params.dpi)


run(main, snakemake)
