"""Rule fit_regressions: lme4/lmerTest mixed-effects models of sequentiality (docs/method.md §7)."""

from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.measures.narrative_sense import pmi as narrative_sense
from storyflow.measures.sequentiality import regression
from storyflow.runner import run


def main(smk):
    # the narrative-sense story scores, when that stage runs on this corpus (common.smk)
    story_scores = list(smk.input.get("story_scores") or [])
    story = (
        narrative_sense.story_covariates(tables.read(tables.PAIR_SCORES, story_scores[0]))
        if story_scores
        else None
    )
    coefficients, diagnostics = regression.fit_specifications(
        regression.read_sequentiality(list(smk.input["sequentiality"])),
        pd.read_parquet(smk.input["covariates"]),
        [regression.Spec.parse(name) for name in smk.params["specs"]],
        models=list(smk.params["models"]),
        formulation=smk.params["formulation"],
        fdr_alpha=float(smk.params["fdr_alpha"]),
        confidence=float(smk.params["confidence"]),
        skipped=dict(smk.params["skipped"]),
        story_covariates=story,
    )
    Path(smk.output["coefficients"]).parent.mkdir(parents=True, exist_ok=True)
    coefficients.to_csv(smk.output["coefficients"], index=False)
    diagnostics.to_csv(smk.output["diagnostics"], index=False)
    for name, path in zip(smk.params["specs"], smk.output["tables"], strict=True):
        coefficients[coefficients["spec"] == name].to_csv(path, index=False)


run(main, snakemake)
