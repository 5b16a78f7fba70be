"""Rule judge_endings: one judge's verdict on every ending, the no-rate curves and the story
statistics."""

from storyflow import tables
from storyflow.measures.tension.judges import judge_endings
from storyflow.runner import run, save


def main(smk):
    verdicts, rates, stories = judge_endings(
        tables.read(tables.TENSION_ENDINGS, smk.input.endings),
        tables.read(tables.TENSION_CUTS, smk.input.cuts),
        smk.params.judge,
        smk.params.curves,
        judge_model=smk.params.judge_model,
        config_models=smk.config["models"],
        model_path=smk.input.get("weights"),
        calibration=smk.input.get("calibration"),
        threads=smk.threads,
    )
    save(smk.output, judgments=verdicts, curves=rates, stories=stories)


run(main, snakemake)
