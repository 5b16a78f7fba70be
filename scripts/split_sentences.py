"""Rule split_sentences: split the sampled stories into sentences with spaCy."""

import logging
from pathlib import Path

from storyflow import sentences, tables
from storyflow.runner import run


def main(smk):
    log = logging.getLogger("storyflow.split_sentences")
    stories = tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "text"])
    nlp = sentences.load_spacy(smk.params.spacy_model)
    sents = sentences.split_sentences(stories, nlp)
    counts = sentences.sentence_counts(sents, stories)
    for path in (smk.output.sentences, smk.output.counts):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    sents.to_parquet(smk.output.sentences, index=False)
    counts.to_csv(smk.output.counts, index=False)
    log.info(
        "%d sentences from %d stories (median %.0f per story, %d stories with fewer than 2)",
        len(sents),
        len(stories),
        counts["n_sentences"].median() if len(counts) else 0,
        int((counts["n_sentences"] < 2).sum()),
    )


run(main, snakemake)
