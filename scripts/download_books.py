"""Rule download_books: fetch the sampled books the data mirror lacks (Project Gutenberg)."""

from pathlib import Path

import pandas as pd

from storyflow.corpora import books
from storyflow.runner import run


def main(smk):
    destinations = list(smk.output.books)
    missing = pd.DataFrame(
        {"document_id": smk.params.ids, "genre": [Path(d).parent.name for d in destinations]}
    )
    books.download_books(missing, destinations, smk.params.url)


run(main, snakemake)
