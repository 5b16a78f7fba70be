"""Rule plot_contrast_answers: one corpus's contrast answers as a forest plot."""

from storyflow import tables
from storyflow.figures.contrasts import plot_contrast_answers
from storyflow.runner import run


def main(smk):
    plot_contrast_answers(
        tables.read(tables.CONTRAST_ANSWERS, smk.input["table"]),
        [smk.output["png"], smk.output["pdf"]],
        corpus=smk.wildcards.corpus,
        dpi=smk.params["dpi"],
    )


run(main, snakemake)
