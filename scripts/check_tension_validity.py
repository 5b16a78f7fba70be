"""Rule check_tension_validity: the validity checks of one forecaster and of every judge on its
ROCStories forecasts (results/tension/validity/<forecaster>.csv)."""

from storyflow import tables
from storyflow.measures.tension.validity import CheckSettings, checks
from storyflow.runner import run


def main(smk):
    p = smk.params
    cosines = tables.read(tables.TENSION_CALIBRATION_COSINES, smk.input.cosines)
    if p.threshold is None:
        calibration = tables.read(tables.TENSION_CALIBRATION, smk.input.calibration)
        threshold, source = float(calibration["threshold"].iloc[0]), "fitted on the fit half"
    else:
        threshold, source = float(p.threshold), "tension.embedding.threshold"
    judged = {
        judge: tables.read(tables.TENSION_CALIBRATION_JUDGMENTS, path)
        for judge, path in zip(p.model_judges, smk.input.judgments, strict=True)
    }
    table = checks(
        p.forecaster,
        cosines,
        threshold,
        source,
        judged,
        p.judges,
        CheckSettings.from_params(p.settings),
    )
    table.to_csv(smk.output.table, index=False)


run(main, snakemake)
