"""Rule plot_regression_coefficients: forest plot of the regression coefficients."""

from storyflow import regression
from storyflow.runner import run


def main(smk):
    regression.plot_coefficients(
        regression.read_coefficients(smk.input["table"]),
        [smk.output["png"], smk.output["pdf"]],
        dpi=int(smk.params["dpi"]),
        width_per_panel=float(smk.params["width_per_panel"]),
    )


run(main, snakemake)
