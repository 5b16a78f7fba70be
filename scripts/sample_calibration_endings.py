"""Rule sample_calibration_endings: the forecaster's K endings of ROCStories stories (from their
four context sentences), for the judges' calibration and the forecaster's validity check."""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.measures.tension import calibration
from storyflow.measures.tension.forecast import forecast_cuts
from storyflow.runner import run


def main(smk):
    p = smk.params
    model = open_job_model(smk)
    cloze = calibration.calibration_stories(
        tables.read(tables.STORIES, smk.input.stories), p.stories
    )
    cuts = calibration.calibration_cuts(cloze, model.count_text, model.name, model.token_unit)
    endings = forecast_cuts(model, cuts, p.k, p.sampling, p.prompts)
    endings.to_parquet(smk.output.endings, index=False)


run(main, snakemake)
