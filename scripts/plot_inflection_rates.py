"""Rule plot_inflection_rates: mean inflection rate per group by vertex-angle threshold."""

from storyflow import tables
from storyflow.figures.tension import plot_inflection_rates
from storyflow.runner import run


def main(smk):
    stories = tables.read_all(tables.TENSION_STORIES, smk.input.stories)
    plot_inflection_rates(stories, list(smk.output), smk.params.dpi)


run(main, snakemake)
