"""Rule plot_pair_scores: distributions of pair scores per group (all and top pairs)."""

import pandas as pd

from storyflow.figures.narrative_sense import plot_pair_scores
from storyflow.runner import run


def main(smk):
    scores = pd.read_parquet(smk.input.scores, columns=["group", "pair_pmi"])
    plot_pair_scores(scores, list(smk.output), top_pairs=smk.params.top_pairs, dpi=smk.params.dpi)


run(main, snakemake)
