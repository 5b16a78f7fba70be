"""Rule compare_plot_holes_human_llm: detection rates on human vs LLM stories (paired)."""

import logging

import pandas as pd

from storyflow import tables
from storyflow.measures.plot_holes.scoring import best_detector, human_vs_llm
from storyflow.runner import run


def main(smk):
    scores = tables.read(tables.PLOT_HOLE_SCORES, smk.input.scores)
    best = best_detector(scores)
    logging.getLogger("storyflow").info("best detector on the made stories: %s", best)
    rates = human_vs_llm(
        tables.read(tables.PLOT_HOLE_ANSWERS, smk.input.answers),
        pd.read_parquet(smk.input.stories),
        human=smk.params.human,
        confidence=float(smk.params.confidence),
        seed=int(smk.params.seed),
        best=best,
    )
    rates.to_csv(smk.output.rates, index=False)


run(main, snakemake)
