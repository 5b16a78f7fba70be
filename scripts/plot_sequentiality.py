"""Rule plot_sequentiality: figure of mean sequentiality against history size per story type."""

from storyflow import tables
from storyflow.figures import sequentiality as figures
from storyflow.figures.common import FigureSettings
from storyflow.runner import run


def main(smk):
    summary = tables.read(tables.SUMMARY, smk.input["table"])
    settings = FigureSettings.from_params(smk.params["figures"])
    figures.plot_sequentiality(summary, [smk.output["png"], smk.output["pdf"]], settings)


run(main, snakemake)
