"""Rule plot_effect_sizes: figure of Hedges' g of sequentiality against history size."""

from storyflow import tables
from storyflow.figures import sequentiality as figures
from storyflow.figures.common import FigureSettings
from storyflow.runner import run


def main(smk):
    effects = tables.read(tables.EFFECTS, smk.input["table"])
    settings = FigureSettings.from_params(smk.params["figures"])
    figures.plot_effect_sizes(effects, [smk.output["png"], smk.output["pdf"]], settings)


run(main, snakemake)
