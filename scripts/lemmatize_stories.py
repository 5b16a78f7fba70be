"""Rule lemmatize_stories: content lemmas with token positions of one corpus (narrative sense)."""

import logging

from storyflow.corpora import read_texts
from storyflow.measures.narrative_sense import pmi as narrative_sense
from storyflow.runner import run


def main(smk):
    log = logging.getLogger("storyflow.lemmatize_stories")
    source, settings = smk.wildcards.source, smk.params.settings
    stories = narrative_sense.select_groups(
        read_texts(settings["kind"], source, smk.input.data, settings), settings.get("groups")
    )
    nlp = narrative_sense.load_lemmatizer(smk.params.spacy_model)
    max_tokens = settings["books"]["tokens"] if settings["kind"] == "books" else None
    table = narrative_sense.lemmatize(
        stories, nlp, max_tokens=max_tokens, count_punctuation=settings["count_punctuation"]
    )
    table.to_parquet(smk.output.lemmas, index=False)
    for group, n in table.groupby("group", sort=False).size().items():
        log.info("%s %s: %d stories lemmatized", source, group, n)


run(main, snakemake)
