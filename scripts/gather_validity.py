"""Rule gather_validity: every measure's validity checks in one table, results/validity.csv."""

import logging

from storyflow import tables, validity
from storyflow.measures.sequentiality.validity import contrast_checks
from storyflow.runner import run


def main(smk):
    checks = [tables.read(tables.VALIDITY, path) for path in smk.input.checks]
    contrasts = [
        contrast_checks(tables.read(tables.EFFECTS, path), corpus, smk.params.min_group_size)
        for corpus, path in zip(smk.params.effect_corpora, smk.input.effects, strict=True)
    ]
    table = validity.gather([*checks, *contrasts])
    table.to_csv(smk.output.table, index=False)
    for line in validity.describe(table):
        logging.getLogger("storyflow.validity").info("%s", line)


run(main, snakemake)
