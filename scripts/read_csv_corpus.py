"""Rule read_csv_corpus: a user's CSV of stories as the stories table, exclusions, counts."""

from storyflow import tables
from storyflow.corpora.user_csv import corpus_tables
from storyflow.runner import run, save


def main(smk):
    corpus = smk.wildcards.corpus
    stories, excluded, counts = corpus_tables(smk.input.csv, smk.params.columns, corpus)
    label = tables.USER_LABEL  # the tables a reader opens name the group column as the config
    save(
        smk.output,
        stories=stories,
        counts=tables.labelled(counts, label),
        excluded=tables.labelled(excluded, label),
    )


run(main, snakemake)
