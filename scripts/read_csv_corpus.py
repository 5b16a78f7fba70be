"""Rule read_csv_corpus: a user's CSV of stories as the stories table, exclusions, counts."""

from pathlib import Path

from storyflow.corpora.user_csv import corpus_tables
from storyflow.runner import run


def main(smk):
    stories, excluded, counts = corpus_tables(smk.input.csv, smk.params.columns)
    for path in smk.output:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    stories.to_parquet(smk.output.stories, index=False)
    counts.to_csv(smk.output.counts, index=False)
    excluded.to_csv(smk.output.excluded, index=False)


run(main, snakemake)
