"""Rule count_word_pairs: story-level PMI of content-lemma pairs over the reference corpora."""

import logging

from storyflow import tables
from storyflow.measures.narrative_sense import pmi as narrative_sense
from storyflow.runner import run


def main(smk):
    log = logging.getLogger("storyflow.count_word_pairs")
    lemmas = narrative_sense.truncate(
        tables.read_all(tables.LEMMAS, smk.input.lemmas), smk.params.reference_max_tokens
    )
    table = narrative_sense.count_pairs(lemmas, min_stories=smk.params.min_stories)
    table.save(smk.output.pairs, smk.output.vocabulary)
    log.info(
        "%d reference stories (each cut to %s tokens): %d lemmas, %d pairs, floor %.3f",
        len(lemmas),
        smk.params.reference_max_tokens,
        len(table.vocabulary),
        len(table.pairs),
        table.floor,
    )


run(main, snakemake)
