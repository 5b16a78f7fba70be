"""Rule sample_stories: validate the HIPPOCORPUS CSV and draw the stratified story sample."""

import logging

from storyflow.corpora import hippocorpus as corpus
from storyflow.runner import run, save


def main(smk):
    log = logging.getLogger("storyflow.sample_stories")
    story_types = list(smk.params.story_types)
    stories, excluded = corpus.read_hippocorpus(smk.input.csv, story_types)
    sampled = corpus.sample_stories(
        stories,
        fraction=smk.params.fraction,
        per_type=smk.params.per_type,
        seed=int(smk.params.seed),
        paired=bool(smk.params.paired),
    )
    counts = corpus.sample_counts(stories, sampled, excluded, story_types)
    save(smk.output, stories=sampled, counts=counts, excluded=excluded)
    for row in counts.itertuples(index=False):
        log.info(
            "%s: %d in corpus, %d excluded, %d sampled (%d with a topic, %d without)",
            row.story_type,
            row.n_in_corpus,
            row.n_excluded,
            row.n_sampled,
            row.n_with_topic,
            row.n_without_topic,
        )


run(main, snakemake)
