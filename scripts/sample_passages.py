"""Rule sample_passages: prose passages of the sampled books, split into sentences, with POV."""

import logging
from pathlib import Path

from storyflow import sentences
from storyflow.corpora import books
from storyflow.runner import run


def main(smk):
    log = logging.getLogger("storyflow.sample_passages")
    columns, passages, pov = smk.params.columns, smk.params.passages, smk.params.pov
    manifest = books.read_manifest(
        smk.input.manifest,
        id_column=columns["id"],
        genre_column=columns["genre"],
        path_column=columns["path"],
        path_template=smk.params.path_template,
    )
    chosen = manifest.set_index("document_id").loc[list(smk.params.ids)].reset_index()
    chosen["path"] = list(smk.input.books)
    settings = books.PassageSettings(
        per_book=passages["per_book"],
        sentences=passages["sentences"],
        margin=passages["margin"],
        max_tries=passages["max_tries"],
        seed=int(smk.params.seed),
        pov_genres=tuple(pov["genres"]),
        first_rate=pov["first_rate"],
        third_rate=pov["third_rate"],
    )
    table, sents = books.build_passages(
        chosen, sentences.load_spacy(smk.params.spacy_model), settings
    )
    counts = sentences.sentence_counts(sents, table)
    sample = books.passage_counts(manifest, chosen, table)
    check = books.pov_agreement(table, columns["pov_hint"]) if columns["pov_hint"] else None
    for path in smk.output:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(smk.output.stories, index=False)
    sents.to_parquet(smk.output.sentences, index=False)
    counts.to_csv(smk.output.counts, index=False)
    sample.to_csv(smk.output.sample, index=False)
    books.pov_table(table, columns["pov_hint"]).to_csv(smk.output.pov, index=False)
    for row in sample.itertuples(index=False):
        log.info("%s: %d passages from %d books", row.story_type, row.n_passages, row.n_books)
    if check is not None:
        for row in check.itertuples(index=False):
            log.info(
                "POV check: %s hinted %s -> %s: %d passages",
                row.genre,
                row.hint,
                row.pov,
                row.n_passages,
            )


run(main, snakemake)
