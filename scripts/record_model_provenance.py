"""Rule record_model_provenance: which weights every model ran with (results/models.csv)."""

from storyflow import tables
from storyflow.lm.specs import ModelSpec
from storyflow.lm.weights import provenance
from storyflow.runner import run


def main(smk):
    specs = [ModelSpec.from_config(entry) for entry in smk.params.models]
    local = iter(smk.input.weights)
    rows = [provenance(spec, None if spec.served else next(local)) for spec in specs]
    tables.MODEL_PROVENANCE.frame(rows).to_csv(smk.output.table, index=False)


run(main, snakemake)
