"""Rules export_story_table and export_sequentiality_scores: Parquet tables a researcher opens,
also as CSV (params.tables: each input's name and its table in storyflow.tables; the output of
the same name gets the CSV; params.label: the grouping label's column name there)."""

from storyflow import tables
from storyflow.runner import run


def main(smk):
    label = getattr(smk.params, "label", tables.LABEL)  # a CSV corpus's tables say "group"
    for name, table in smk.params.tables.items():
        tables.parquet_to_csv(getattr(tables, table), smk.input[name], smk.output[name], label)


run(main, snakemake)
