"""Rules detect_benchmark_plot_holes and detect_plot_hole_validation: one model's answers on a
file of made stories (the FlawedFictions file, or the validation pool)."""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.measures.plot_holes.detect import DetectorSettings, detect
from storyflow.runner import run


def main(smk):
    settings = DetectorSettings.from_config(smk.params.settings)
    # n_ctx: sized to the stories before the weights load
    model = open_job_model(smk, n_ctx=settings.n_ctx or 2048)
    answers = detect(model, tables.read(tables.PLOT_HOLE_STORIES, smk.input.made), settings)
    answers.to_parquet(smk.output.answers, index=False)


run(main, snakemake)
