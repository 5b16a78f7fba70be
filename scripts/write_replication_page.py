"""Rule write_replication_page: one paper's replication table in words, with its figure."""

from storyflow import tables
from storyflow.replication.page import write
from storyflow.runner import run


def main(smk):
    write(
        smk.wildcards.paper,
        tables.read(tables.REPLICATION, smk.input.table),
        smk.output.page,
        title=smk.params.title,
        measure=smk.params.measure,
        confidence=smk.params.confidence,
        rates=smk.params.rates,
        figure=smk.input.figure,
    )


run(main, snakemake)
