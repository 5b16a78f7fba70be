"""Rule download_hippocorpus: fetch the official HIPPOCORPUS zip and extract hippoCorpusV2.csv."""

from pathlib import Path

from storyflow.corpora import hippocorpus as corpus
from storyflow.runner import run


def main(smk):
    corpus.download_hippocorpus(smk.params.url, Path(smk.output.csv))


run(main, snakemake)
