"""Rule plot_effect_sizes: figure of Hedges' g of sequentiality against history size."""

from storyflow import tables
from storyflow.figures import sequentiality as figures
from storyflow.runner import run


def main(smk):
    figures.plot_effect_sizes(
        tables.read(tables.EFFECTS, smk.input["table"]),
        [smk.output["png"], smk.output["pdf"]],
        dpi=int(smk.params["dpi"]),
        width_per_panel=float(smk.params["width_per_panel"]),
        height_per_panel=float(smk.params["height_per_panel"]),
    )


run(main, snakemake)
