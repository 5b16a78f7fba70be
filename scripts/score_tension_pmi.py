"""Rule score_tension_pmi: PMI of the remainder with the prefix at every cut (nats/token)."""

from pathlib import Path

from storyflow import tables
from storyflow.lm.backends.llama_cpp import LlamaCppScorer
from storyflow.measures.tension.likelihood import cut_pmi
from storyflow.runner import run


def main(smk):
    cuts = tables.read(tables.TENSION_CUTS, smk.input.cuts)
    n_ctx = int(cuts["story_tokens"].max()) + 8 if len(cuts) else 64
    scorer = LlamaCppScorer(smk.input.gguf, n_ctx=n_ctx, n_threads=smk.threads)
    pmi = cut_pmi(scorer, cuts, tables.read(tables.SENTENCES, smk.input.sentences),
                  smk.params.model["name"])  # fmt: skip
    Path(smk.output.pmi).parent.mkdir(parents=True, exist_ok=True)
    pmi.to_parquet(smk.output.pmi, index=False)


run(main, snakemake)
