"""Rule read_csv_corpus: a user's CSV of stories as the stories table, exclusions, counts."""

from storyflow.corpora.user_csv import corpus_tables
from storyflow.runner import run, save


def main(smk):
    corpus = smk.wildcards.corpus
    stories, excluded, counts = corpus_tables(smk.input.csv, smk.params.columns, corpus)
    save(smk.output, stories=stories, counts=counts, excluded=excluded)


run(main, snakemake)
