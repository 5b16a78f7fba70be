"""Rule write_contrast_page: one corpus's contrast answers and their forest plot as a page of
the report."""

from storyflow.contrast_answers import page as contrast_page
from storyflow.runner import run


def main(smk):
    contrast_page.write(
        smk.input["table"], smk.output["page"], corpus=smk.wildcards.corpus, figure=smk.input["png"]
    )


run(main, snakemake)
