"""Rule plot_ceeval: CEEval-Full by detector, and by story length (failed detectors hollow)."""

import pandas as pd

from storyflow import tables
from storyflow.figures.plot_holes import plot_ceeval, plot_ceeval_by_length
from storyflow.runner import run


def main(smk):
    dpi = smk.params.dpi
    scores = tables.read(tables.PLOT_HOLE_SCORES, smk.input.scores)
    plot_ceeval(scores, [smk.output.png, smk.output.pdf], dpi)
    made = pd.concat([tables.read(tables.PLOT_HOLE_STORIES, p) for p in smk.input.made])
    answers = tables.read(tables.PLOT_HOLE_ANSWERS, smk.input.answers)
    plot_ceeval_by_length(
        answers,
        made,
        [smk.output.length_png, smk.output.length_pdf],
        dpi,
        confidence=smk.params.confidence,
        scores=scores,
    )


run(main, snakemake)
