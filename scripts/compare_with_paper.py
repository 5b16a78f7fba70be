"""Rule compare_with_paper: one paper's published results beside ours."""

from storyflow.replication import papers
from storyflow.runner import run


def main(smk):
    files = {name: list(paths) for name, paths in smk.input.items()}
    table = papers.compare(smk.wildcards.paper, files, smk.params.settings)
    table.to_csv(smk.output.table, index=False)


run(main, snakemake)
