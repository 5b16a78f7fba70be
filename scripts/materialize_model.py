"""Rule materialize_model: put one model's GGUF under resources/models/ from its source."""

from storyflow.lm.weights import materialize
from storyflow.runner import run


def main(smk):
    materialize(smk.wildcards.model, dict(smk.params.source), smk.output.weights)


run(main, snakemake)
