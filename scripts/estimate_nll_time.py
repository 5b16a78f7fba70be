"""Rule estimate_nll_time: the NLL stage's expected time for one corpus, every model.

From the plans of rule plan_nll and each model's NLL rate (tokens/s by model name,
storyflow.lm.rates.model_rates: the only setting this rule takes, so a new rate re-runs this rule
alone).
"""

import logging

from storyflow import tables
from storyflow.lm.nll.cost import corpus_estimate, estimate_summary
from storyflow.runner import run


def main(smk):
    models = list(smk.params.models)
    estimate = corpus_estimate(
        dict(zip(models, (tables.read(tables.NLL_COST, p) for p in smk.input.cost), strict=True)),
        dict(
            zip(
                models,
                (tables.read(tables.NLL_EXCLUDED, p) for p in smk.input.excluded),
                strict=True,
            )
        ),
        smk.params.tokens_per_second,
    )
    estimate.to_csv(smk.output.estimate, index=False)
    for line in estimate_summary(estimate):
        logging.getLogger("storyflow.estimate_nll_time").info("%s", line)


run(main, snakemake)
