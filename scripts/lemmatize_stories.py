"""Rule lemmatize_stories: content lemmas with word positions of one corpus (narrative sense)."""

import logging
from pathlib import Path

from storyflow import books, narrative_sense
from storyflow.runner import run


def read_source(smk):
    source, settings = smk.wildcards.source, smk.params.settings
    limit = settings["limit"]
    if source == "hippocorpus":
        return narrative_sense.read_hippocorpus_stories(
            smk.input.data, settings["story_types"], limit
        )
    if source == "rocstories":
        return narrative_sense.read_rocstories(smk.input.data, limit)
    if source == "hanna":
        stories, counts = narrative_sense.read_hanna(smk.input.data, limit)
        log = logging.getLogger("storyflow.lemmatize_stories")
        for row in counts.itertuples(index=False):
            log.info(
                "HANNA %s: %d stories, %d with a speaker label (kept as written)",
                row.group,
                row.n_stories,
                row.n_artefact,
            )
        return stories
    columns = settings["columns"]
    manifest = books.read_manifest(
        smk.input.data,
        id_column=columns["id"],
        genre_column=columns["genre"],
        path_column=columns["path"],
        path_template=settings["path_template"],
    )
    return narrative_sense.book_passages(
        narrative_sense.limit_groups(manifest, limit, by="genre"),
        per_book=settings["books"]["passages_per_book"],
        tokens=settings["books"]["tokens"],
        seed=int(settings["seed"]),
    )


def main(smk):
    log = logging.getLogger("storyflow.lemmatize_stories")
    stories = read_source(smk)
    nlp = narrative_sense.load_lemmatizer(smk.params.spacy_model)
    max_tokens = smk.params.settings["books"]["tokens"] if smk.wildcards.source == "books" else None
    table = narrative_sense.lemmatize(stories, nlp, max_tokens=max_tokens)
    Path(smk.output.lemmas).parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(smk.output.lemmas, index=False)
    for group, n in table.groupby("group", sort=False).size().items():
        log.info("%s %s: %d stories lemmatized", smk.wildcards.source, group, n)


run(main, snakemake)
