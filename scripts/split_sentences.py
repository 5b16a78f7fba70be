"""Rule split_sentences: split the sampled stories into sentences with spaCy."""

import logging

from storyflow import sentences, tables
from storyflow.runner import run, save


def main(smk):
    log = logging.getLogger("storyflow.split_sentences")
    stories = tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "text"])
    nlp = sentences.load_spacy(smk.params.spacy_model)
    sents = sentences.split_sentences(stories, nlp)
    counts = sentences.sentence_counts(sents, stories)
    save(smk.output, sentences=sents, counts=tables.labelled(counts, smk.params.label))
    log.info(
        "%d sentences from %d stories (median %.0f per story, %d stories with fewer than 2)",
        len(sents),
        len(stories),
        counts["n_sentences"].median() if len(counts) else 0,
        int((counts["n_sentences"] < 2).sum()),
    )


run(main, snakemake)
