"""Rule plan_tension_cuts: where each story is cut (forecaster's tokens) and which stories are
left out."""

from pathlib import Path

from storyflow import tables
from storyflow.lm.backends.llama_cpp import VocabOnly
from storyflow.measures.tension.cuts import CutSettings, plan_cuts
from storyflow.runner import run


def main(smk):
    vocab = VocabOnly(smk.input.gguf)
    cuts, excluded = plan_cuts(
        tables.read(tables.STORIES, smk.input.stories),
        tables.read(tables.SENTENCES, smk.input.sentences),
        vocab.tokenize,
        CutSettings(**smk.params.cuts),
        smk.params.model["name"],
    )
    Path(smk.output.cuts).parent.mkdir(parents=True, exist_ok=True)
    Path(smk.output.excluded).parent.mkdir(parents=True, exist_ok=True)
    cuts.to_parquet(smk.output.cuts, index=False)
    excluded.to_csv(smk.output.excluded, index=False)


run(main, snakemake)
