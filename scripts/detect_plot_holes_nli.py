"""Rules detect_plot_holes_nli (and its benchmark and validation-pool twins): the NLI baseline
of one model on made stories (O and F)."""

from storyflow.lm.connect import job_spec, open_model
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
    model = open_model(
        job_spec(smk.params.model, smk.config["models"]),
        smk.input.get("gguf"),
        n_ctx=settings.n_ctx or 2048,  # sized to the stories before the weights load
        n_threads=smk.threads,
    )
    nli_answers(model, shown_versions(made), settings).to_parquet(smk.output.answers, index=False)


run(main, snakemake)
