"""Rule estimate_lm_cost: what every language-model stage will cost, before any model is asked."""

from storyflow.estimate import estimate_corpora
from storyflow.runner import run


def main(smk):
    cost = estimate_corpora(
        dict(zip(smk.params.corpora, smk.input.sentences, strict=True)),
        smk.params.settings,
        smk.params.rates,
        smk.params.max_hours,
    )
    cost.to_csv(smk.output.cost, index=False)


run(main, snakemake)
