"""Rule summarize_tension: group means, contrasts, likelihood vs sampled, story measures, each
group and contrast labelled with its forecaster's and judge's validity verdict."""

from storyflow.measures.tension.compare import SummarySettings, summarize
from storyflow.runner import run, save


def main(smk):
    groups, effects, likelihood, measures = summarize(
        smk.input.stories,
        list(smk.input.scores),
        list(smk.input.pmi),
        list(smk.input.validity),
        SummarySettings.from_params(smk.params.settings),
    )
    save(smk.output, groups=groups, effects=effects, likelihood=likelihood, measures=measures)


run(main, snakemake)
