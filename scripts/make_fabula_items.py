"""Rule make_fabula_items: story versions, corruptions, template and control questions."""

from storyflow import tables
from storyflow.measures.fabula_entropy.items import make_items
from storyflow.runner import run


def main(smk):
    items = make_items(
        tables.read(tables.STORIES, smk.input.stories),
        tables.read(tables.SENTENCES, smk.input.sentences),
        smk.params.settings,
        smk.params.spacy_model,
        smk.input.lexicon,
    )
    for name in ("versions", "questions", "corruptions"):
        items[name].to_parquet(smk.output[name], index=False)
    items["excluded"].to_csv(smk.output.excluded, index=False)


run(main, snakemake)
