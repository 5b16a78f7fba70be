"""Rule plot_pair_scores: distributions of pair scores per group (all and top pairs)."""

from storyflow import tables
from storyflow.figures.narrative_sense import plot_pair_scores
from storyflow.runner import run


def main(smk):
    scores = tables.read(tables.PAIR_SCORES, smk.input.scores)
    p = smk.params
    plot_pair_scores(scores, list(smk.output), top_pairs=p.top_pairs, dpi=p.dpi, seed=p.seed)


run(main, snakemake)
