"""Rule score_plot_hole_surprisal: sentence NLLs of the O, F, C and D versions (one model)."""

from pathlib import Path

from storyflow import tables
from storyflow.lm.backends.llama_cpp import LlamaCppScorer
from storyflow.measures.plot_holes.surprisal import score_versions
from storyflow.runner import run


def main(smk):
    n_ctx = int(smk.params.n_ctx)
    scorer = LlamaCppScorer(smk.input.gguf, n_ctx=n_ctx, n_threads=smk.threads)
    made = tables.read(tables.PLOT_HOLE_STORIES, smk.input.made)
    table = score_versions(scorer, made, smk.wildcards.model, n_ctx)
    Path(smk.output.surprisal).parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(smk.output.surprisal, index=False)


run(main, snakemake)
