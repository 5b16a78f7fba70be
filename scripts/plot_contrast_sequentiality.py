"""Rule plot_contrast_sequentiality: mean sequentiality of each contrast's two groups."""

from storyflow import tables
from storyflow.figures import sequentiality as figures
from storyflow.runner import run


def main(smk):
    figures.plot_contrast_sequentiality(
        tables.read(tables.EFFECTS, smk.input["table"]),
        [smk.output["png"], smk.output["pdf"]],
        confidence=float(smk.params["confidence"]),
        dpi=int(smk.params["dpi"]),
        width_per_panel=float(smk.params["width_per_panel"]),
        height_per_panel=float(smk.params["height_per_panel"]),
    )


run(main, snakemake)
