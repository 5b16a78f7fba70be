"""Rule plot_tension_curves: example no-rate curves with their reversals marked."""

from storyflow import tables
from storyflow.figures.tension import plot_example_curves
from storyflow.runner import run


def main(smk):
    curves = tables.read(tables.TENSION_CURVES, smk.input.curves)
    p = smk.params
    plot_example_curves(curves, list(smk.output), p.dpi, smoothing=p.smoothing, angle=p.angle)


run(main, snakemake)
