"""Rule detect_plot_holes: one model's answers on the made stories and every original."""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.measures.plot_holes.detect import DetectorSettings, detect
from storyflow.measures.plot_holes.scoring import detection_items, read_made
from storyflow.runner import run


def main(smk):
    made, _ = read_made(
        list(smk.input.made),
        next(iter(smk.input.verdicts), None),
        min_annotators=smk.params.min_annotators,
    )
    items = detection_items(
        made,
        tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "text"]),
        tables.read(tables.SENTENCES, smk.input.sentences),
    )
    settings = DetectorSettings.from_config(smk.params.settings)
    # n_ctx: sized to the stories before the weights load
    model = open_job_model(smk, n_ctx=settings.n_ctx or 2048)
    detect(model, items, settings).to_parquet(smk.output.answers, index=False)


run(main, snakemake)
