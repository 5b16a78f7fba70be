"""Rule lemmatize_stories: content lemmas with word positions of one corpus (narrative sense)."""

import logging

from storyflow.corpora import read_texts
from storyflow.measures.narrative_sense import pmi as narrative_sense
from storyflow.runner import run


def main(smk):
    log = logging.getLogger("storyflow.lemmatize_stories")
    source, settings = smk.wildcards.source, smk.params.settings
    stories = read_texts(settings["kind"], source, smk.input.data, settings)
    nlp = narrative_sense.load_lemmatizer(smk.params.spacy_model)
    max_tokens = settings["books"]["tokens"] if settings["kind"] == "books" else None
    table = narrative_sense.lemmatize(stories, nlp, max_tokens=max_tokens)
    table.to_parquet(smk.output.lemmas, index=False)
    for group, n in table.groupby("group", sort=False).size().items():
        log.info("%s %s: %d stories lemmatized", source, group, n)


run(main, snakemake)
