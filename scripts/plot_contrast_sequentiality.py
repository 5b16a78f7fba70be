"""Rule plot_contrast_sequentiality: mean sequentiality of each contrast's two groups."""

from storyflow import tables
from storyflow.figures import sequentiality as figures
from storyflow.figures.common import FigureSettings
from storyflow.runner import run


def main(smk):
    effects = tables.read(tables.EFFECTS, smk.input["table"])
    settings = FigureSettings.from_params(smk.params["figures"])
    figures.plot_contrast_sequentiality(
        effects,
        [smk.output["png"], smk.output["pdf"]],
        settings,
        confidence=float(smk.params["confidence"]),
    )


run(main, snakemake)
