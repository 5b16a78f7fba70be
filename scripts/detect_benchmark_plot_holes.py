"""Rules detect_benchmark_plot_holes and detect_plot_hole_validation: one model's answers on a
file of made stories (the FlawedFictions file, or the validation pool)."""

from storyflow import tables
from storyflow.lm.connect import job_spec, open_model
from storyflow.measures.plot_holes.detect import DetectorSettings, detect
from storyflow.runner import run


def main(smk):
    settings = DetectorSettings.from_config(smk.params.settings)
    model = open_model(
        job_spec(smk.params.model, smk.config["models"]),
        smk.input.get("gguf"),
        n_ctx=settings.n_ctx or 2048,  # sized to the stories before the weights load
        n_threads=smk.threads,
    )
    answers = detect(model, tables.read(tables.PLOT_HOLE_STORIES, smk.input.made), settings)
    answers.to_parquet(smk.output.answers, index=False)


run(main, snakemake)
