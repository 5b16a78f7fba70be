"""Rule detect_plot_holes: one model's answers on the made stories and every original."""

from pathlib import Path

from storyflow import tables
from storyflow.lm.registry import ModelSpec
from storyflow.measures.plot_holes.detect import DetectorSettings, detect
from storyflow.measures.plot_holes.scoring import detection_items, read_made
from storyflow.runner import run


def main(smk):
    made, _ = read_made(list(smk.input.made), smk.params.verdicts)
    items = detection_items(
        made,
        tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "text"]),
        tables.read(tables.SENTENCES, smk.input.sentences),
    )
    answers = detect(
        ModelSpec.from_config(smk.params.model),
        smk.input.gguf,
        items,
        DetectorSettings.from_config(smk.params.settings),
        n_threads=smk.threads,
    )
    Path(smk.output.answers).parent.mkdir(parents=True, exist_ok=True)
    answers.to_parquet(smk.output.answers, index=False)


run(main, snakemake)
