"""Rule read_corpus_stories: HANNA's or ROCStories' seeded story sample as the stories table."""

import logging

from storyflow.corpora.selection import sample_corpus
from storyflow.runner import run, save


def main(smk):
    log = logging.getLogger("storyflow.read_corpus_stories")
    corpus = smk.wildcards.corpus
    stories, excluded, counts = sample_corpus(corpus, smk.input.csv, smk.params.sample)
    save(smk.output, stories=stories, counts=counts, excluded=excluded)
    for row in counts.itertuples(index=False):
        log.info(
            "%s: %d drawn, %d excluded, %d kept",
            row.story_type,
            row.n_in_corpus,
            row.n_excluded,
            row.n_sampled,
        )


run(main, snakemake)
