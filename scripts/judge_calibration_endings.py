"""Rule judge_calibration_endings: an LLM judge's verdicts on one forecaster's held-out
ROCStories forecasts, each against the right and the wrong ending (the judge's validity check;
two judge prompts per forecast, timed in the log)."""

from storyflow import tables
from storyflow.lm.connect import open_job_model
from storyflow.measures.tension.calibration import judge_calibration_with_model
from storyflow.runner import run


def main(smk):
    p = smk.params
    model = open_job_model(smk, "judge_model", share_prefix=True)
    verdicts = judge_calibration_with_model(
        tables.read(tables.TENSION_ENDINGS, smk.input.endings),
        tables.read(tables.STORIES, smk.input.stories),
        p.seed,
        model,
        p.judge,
    )
    verdicts.to_parquet(smk.output.judgments, index=False)


run(main, snakemake)
