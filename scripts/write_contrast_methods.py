"""Rule write_contrast_methods: one corpus's methods and results sentences, from its contrast
answers and the run's model provenance."""

from pathlib import Path

from storyflow import tables
from storyflow.contrast_answers.methods import methods_text
from storyflow.runner import run


def main(smk):
    text = methods_text(
        tables.read(tables.CONTRAST_ANSWERS, smk.input["table"]),
        tables.read(tables.MODEL_PROVENANCE, smk.input["provenance"]),
        smk.params["settings"],
        corpus=smk.wildcards.corpus,
    )
    Path(smk.output["methods"]).write_text(text, encoding="utf-8")


run(main, snakemake)
