"""Rule plot_fabula_entropy: index distributions (original vs corrupted) and dose-response."""

from storyflow import tables
from storyflow.figures.fabula_entropy import plot_fabula_entropy
from storyflow.runner import run


def main(smk):
    plot_fabula_entropy(
        tables.read(tables.FEI_STORY_INDICES, smk.input.indices),
        tables.read(tables.FEI_DOSE, smk.input.dose),
        [smk.output.distributions, smk.output.distributions_pdf],
        [smk.output.dose, smk.output.dose_pdf],
        dpi=smk.params.dpi,
    )


run(main, snakemake)
