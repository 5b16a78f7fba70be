"""Rule make_model_plot_holes: the paper's maker with a configured model, and the review sheet."""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.measures.plot_holes.llm_maker import MakerJob, make_plot_holes
from storyflow.runner import run, save


def main(smk):
    # the window is sized to the stories before the weights load (llm_maker.maker_window)
    model = open_job_model(smk)
    made, skipped, attempts, sheet = make_plot_holes(
        model,
        tables.read(tables.SENTENCES, smk.input.sentences),
        tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "text", "story_type"]),
        MakerJob.from_params(smk.params.job),
        smk.params.spacy_model,
    )
    save(smk.output, made=made, skipped=skipped, attempts=attempts, sheet=sheet)


run(main, snakemake)
