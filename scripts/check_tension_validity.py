"""Rule check_tension_validity: the validity checks of one forecaster and of every judge on its
ROCStories forecasts (results/tension/validity/<forecaster>.csv)."""

from storyflow import tables
from storyflow.measures.tension.validity import CheckSettings, checks, embedding_threshold
from storyflow.runner import run


def main(smk):
    p = smk.params
    judged = {
        judge: tables.read(tables.TENSION_CALIBRATION_JUDGMENTS, path)
        for judge, path in zip(p.model_judges, smk.input.judgments, strict=True)
    }
    table = checks(
        p.forecaster,
        tables.read(tables.TENSION_CALIBRATION_COSINES, smk.input.cosines),
        embedding_threshold(
            p.threshold, tables.read(tables.TENSION_CALIBRATION, smk.input.calibration)
        ),
        judged,
        p.judges,
        CheckSettings.from_params(p.settings),
    )
    table.to_csv(smk.output.table, index=False)


run(main, snakemake)
