"""Rule detect_benchmark_plot_holes: one model's answers on the FlawedFictions stories."""

from pathlib import Path

from storyflow import tables
from storyflow.lm.registry import ModelSpec
from storyflow.measures.plot_holes.detect import DetectorSettings, detect
from storyflow.runner import run


def main(smk):
    answers = detect(
        ModelSpec.from_config(smk.params.model),
        smk.input.gguf,
        tables.read(tables.PLOT_HOLE_STORIES, smk.input.made),
        DetectorSettings.from_config(smk.params.settings),
        n_threads=smk.threads,
    )
    Path(smk.output.answers).parent.mkdir(parents=True, exist_ok=True)
    answers.to_parquet(smk.output.answers, index=False)


run(main, snakemake)
