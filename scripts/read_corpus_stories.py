"""Rule read_corpus_stories: HANNA's or ROCStories' seeded story sample as the stories table."""

import logging
from pathlib import Path

from storyflow.corpora.selection import sample_corpus
from storyflow.runner import run


def main(smk):
    log = logging.getLogger("storyflow.read_corpus_stories")
    corpus = smk.wildcards.corpus
    stories, excluded, counts = sample_corpus(corpus, smk.input.csv, smk.params.sample)
    for path in smk.output:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    stories.to_parquet(smk.output.stories, index=False)
    counts.to_csv(smk.output.counts, index=False)
    excluded.to_csv(smk.output.excluded, index=False)
    for row in counts.itertuples(index=False):
        log.info(
            "%s: %d drawn, %d excluded, %d kept",
            row.story_type,
            row.n_in_corpus,
            row.n_excluded,
            row.n_sampled,
        )


run(main, snakemake)
