# Sequentiality: the config lookups and input functions of its rules (the other files of
# workflow/rules/sequentiality/), kept apart from the rules as Snakemake's linter asks; file
# names and decisions come from storyflow.plan.sequentiality.
SEQUENTIALITY_MODELS = exit_on_config_error(
    plan.sequentiality.models, config
)  # local, role sequentiality
SHARDS = plan.sequentiality.shards(config)
NLL_THROUGHPUT = plan.sequentiality.nll_throughput(config)  # changes no score
COVARIATE_SETTINGS = plan.sequentiality.covariate_settings(config)
REGRESSION_SETTINGS = plan.sequentiality.regression_settings(config)
REGRESSION_SPECS, REGRESSION_SKIPPED = exit_on_config_error(
    plan.sequentiality.regressions, config
)
# the corpora and models of the regressions (regression.corpora, regression.models)
REGRESSION_CORPORA = exit_on_config_error(plan.sequentiality.regression_corpora, config)
REGRESSION_MODELS = (
    exit_on_config_error(plan.sequentiality.regression_models, config)
    if REGRESSION_SPECS
    else []
)
for _spec, _reason in REGRESSION_SKIPPED.items() if REGRESSION_CORPORA else ():
    logger.warning(f"regression {_spec} skipped: {_reason}")


def nll_settings(wildcards):
    return plan.sequentiality.nll_settings(
        config, wildcards.corpus, MODEL_SPECS[wildcards.model]
    )


def every_model(path):
    """Input function: ``path`` of a corpus for every sequentiality model."""

    def paths(wildcards):
        return expand(path, corpus=wildcards.corpus, model=SEQUENTIALITY_MODELS)

    return paths


def nll_shards(wildcards):
    return expand(
        plan.sequentiality.NLL_SHARD,
        corpus=wildcards.corpus,
        model=wildcards.model,
        shard=SHARDS,
    )


def regression_sentence_tables(wildcards):
    """The sentence sequentiality tables of the models of the regressions (regression.models)."""
    return expand(
        plan.sequentiality.SENTENCE_SCORES,
        corpus=wildcards.corpus,
        model=REGRESSION_MODELS,
    )


def connective_lexicon():
    """The configured connective lexicon, else the one packaged with storyflow."""
    path = plan.sequentiality.connectives(config)
    return path or plan.sequentiality.packaged_connectives()


def narrative_sense_scores(wildcards):
    """The corpus's narrative-sense story scores when they are a regression covariate."""
    return plan.sequentiality.narrative_sense_covariate(config, wildcards.corpus)
