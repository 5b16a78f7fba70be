"""Rules detect_plot_holes_nli (and its benchmark and validation-pool twins): the NLI baseline
of one model on made stories (O and F)."""

from storyflow.lm.connect import open_job_model
from storyflow.measures.plot_holes.nli import NliSettings, nli_answers
from storyflow.measures.plot_holes.scoring import read_made, shown_versions
from storyflow.runner import run


def main(smk):
    made, _ = read_made(
        list(smk.input.made),
        next(iter(smk.input.verdicts), None),
        min_annotators=smk.params.min_annotators,
    )
    settings = NliSettings.from_config(smk.params.settings)
    # n_ctx: sized to the stories before the weights load
    model = open_job_model(smk, n_ctx=settings.n_ctx or 2048)
    nli_answers(model, shown_versions(made), settings).to_parquet(smk.output.answers, index=False)


run(main, snakemake)
