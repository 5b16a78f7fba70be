"""Rule make_controlled_plot_holes: continuity errors with exact ground truth (no model)."""

from storyflow import tables
from storyflow.measures.plot_holes.controlled import make_controlled
from storyflow.runner import run, save
from storyflow.sentences import load_spacy


def main(smk):
    made, skipped, coverage = make_controlled(
        tables.read(tables.SENTENCES, smk.input.sentences),
        tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "text", "story_type"]),
        load_spacy(smk.params.spacy_model, exclude=("lemmatizer",)),
        seed=int(smk.params.seed),
        min_sentences=int(smk.params.min_sentences),
        max_words=smk.params.max_words,
        corpus=smk.wildcards.corpus,
        story_types=smk.params.story_types,
    )
    save(smk.output, made=made, skipped=skipped, coverage=coverage)


run(main, snakemake)
