"""Rule plot_inflection_rates: mean inflection rate per group by vertex-angle threshold, with
its interval, results of models that failed their validity checks drawn hollow."""

from storyflow import tables
from storyflow.figures.tension import plot_inflection_rates
from storyflow.runner import run


def main(smk):
    groups = tables.read(tables.TENSION_GROUPS, smk.input.groups)
    plot_inflection_rates(groups, list(smk.output), smk.params.dpi)


run(main, snakemake)
