"""Rule plot_regression_coefficients: forest plot of the regression coefficients."""

from storyflow.figures.regression import plot_coefficients
from storyflow.measures.sequentiality.regression import read_coefficients
from storyflow.runner import run


def main(smk):
    plot_coefficients(
        read_coefficients(smk.input["table"]),
        [smk.output["png"], smk.output["pdf"]],
        dpi=int(smk.params["dpi"]),
        width_per_panel=float(smk.params["width_per_panel"]),
    )


run(main, snakemake)
