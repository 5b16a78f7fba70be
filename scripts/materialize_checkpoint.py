"""Rule materialize_checkpoint: find one Hugging Face checkpoint (a folder, or the hub at a
revision) and write its manifest: the folder and the commit its weights are read from."""

from storyflow.lm.weights import materialize_checkpoint
from storyflow.runner import run


def main(smk):
    materialize_checkpoint(smk.wildcards.model, dict(smk.params.source), smk.output.manifest)


run(main, snakemake)
