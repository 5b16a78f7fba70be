"""Rule score_plot_hole_surprisal: sentence NLLs of the O, F, C and D versions (one model)."""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.measures.plot_holes.surprisal import score_model
from storyflow.runner import run


def main(smk):
    table = score_model(
        open_job_model(smk),
        tables.read(tables.PLOT_HOLE_STORIES, smk.input.made),
        n_ctx=smk.params.n_ctx,
    )
    table.to_parquet(smk.output.surprisal, index=False)


run(main, snakemake)
