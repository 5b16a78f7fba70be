"""Rule summarize_tension: group means, contrasts, likelihood vs sampled, story measures, each
group and contrast labelled with its forecaster's and judge's validity verdict."""

from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.measures.tension import compare
from storyflow.measures.tension.validity import read_checks
from storyflow.runner import run


def main(smk):
    p = smk.params
    labels = tables.read(tables.STORIES, smk.input.stories)
    stories = pd.concat([pd.read_parquet(f) for f in smk.input.scores], ignore_index=True)
    pmi = tables.read_all(tables.TENSION_PMI, smk.input.pmi) if smk.input.pmi else None
    checks = read_checks(list(smk.input.validity))
    intervals = compare.Intervals(**p.intervals)
    groups = compare.group_means(stories, p.k, intervals, checks)
    if "prompt_id" in labels.columns:
        effects = compare.paired_effects(stories, labels, p.k, intervals, checks)
    else:
        effects = compare.contrast_effects(stories, labels, p.contrasts, p.k, intervals, checks)
    for path in smk.output:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    groups.to_csv(smk.output.groups, index=False)
    effects.to_csv(smk.output.effects, index=False)
    empty = tables.TENSION_LIKELIHOOD.empty()
    likelihood = compare.likelihood_vs_sampled(stories, pmi) if pmi is not None else empty
    likelihood.to_csv(smk.output.likelihood, index=False)
    measures = compare.story_measures(
        labels["story_id"], stories, pmi, p.forecasters, p.judges, p.pmi_models
    )
    measures.to_parquet(smk.output.measures, index=False)


run(main, snakemake)
