"""Rule record_run: what the run ran with (results/run.csv): storyflow's version and its
libraries'."""

from storyflow.runner import run
from storyflow.versions import run_record


def main(smk):
    run_record(smk.params.versions).to_csv(smk.output.table, index=False)


run(main, snakemake)
