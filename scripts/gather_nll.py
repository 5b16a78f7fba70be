"""Rule gather_nll: concatenate one corpus x model's NLL shards into one table."""

from storyflow.lm.nll.engine import gather_shards
from storyflow.runner import run


def main(smk):
    gather_shards(list(smk.input.shards)).to_parquet(smk.output.nll, index=False)


run(main, snakemake)
