# Sequentiality: the config lookups and input functions of its rules (workflow/rules/sequentiality.smk
# and the files it includes), kept apart from the rules as Snakemake's linter asks.
SEQUENTIALITY_OUT = plan.sequentiality.OUT
SEQUENTIALITY_MODELS = checked(
    plan.sequentiality.models, config
)  # local, role sequentiality
SHARDS = [f"{k:03d}" for k in range(config["nll"]["shards"])]
REGRESSION_SPECS, REGRESSION_SKIPPED = checked(plan.sequentiality.regressions, config)
# the corpora and models of the regressions (regression.corpora, regression.models)
REGRESSION_CORPORA = checked(plan.sequentiality.regression_corpora, config)
REGRESSION_MODELS = (
    checked(plan.sequentiality.regression_models, config) if REGRESSION_SPECS else []
)
for _spec, _reason in REGRESSION_SKIPPED.items():
    logger.warning(f"regression {_spec} skipped: {_reason}")


def nll_settings(wildcards):
    return plan.sequentiality.nll_settings(config, wildcards.corpus)


def per_model_plans(table):
    """Input function: every model's plan table ``table`` (nll_cost, nll_excluded) of a corpus."""

    def paths(wildcards):
        return expand(
            SEQUENTIALITY_OUT.table("{table}/{model}.csv"),
            corpus=wildcards.corpus,
            table=table,
            model=SEQUENTIALITY_MODELS,
        )

    return paths


def nll_shards(wildcards):
    return expand(
        SEQUENTIALITY_OUT("nll/{model}/shard-{shard}.parquet"),
        corpus=wildcards.corpus,
        model=wildcards.model,
        shard=SHARDS,
    )


def per_model_tables(wildcards, level):
    """Every model's sequentiality table of ``level`` ("stories" or "sentences")."""
    return expand(
        SEQUENTIALITY_OUT("scores/{model}/{level}.parquet"),
        corpus=wildcards.corpus,
        model=SEQUENTIALITY_MODELS,
        level=level,
    )


def story_tables(wildcards):
    return per_model_tables(wildcards, "stories")


def sentence_tables(wildcards):
    return per_model_tables(wildcards, "sentences")


def regression_sentence_tables(wildcards):
    """The sentence sequentiality tables of the models of the regressions (regression.models)."""
    return expand(
        SEQUENTIALITY_OUT("scores/{model}/sentences.parquet"),
        corpus=wildcards.corpus,
        model=REGRESSION_MODELS,
    )


def connective_lexicon():
    """The configured connective lexicon, else the one packaged with storyflow."""
    path = config["covariates"]["connectives"]
    return path or str(Path(workflow.basedir) / "src/storyflow/data/connectives.tsv")


def narrative_sense_scores(wildcards):
    """The corpus's narrative-sense story scores, a story-level regression covariate when the
    narrative-sense stage scores this corpus and regression.narrative_sense is on; else nothing.
    """
    if config["regression"]["narrative_sense"] and wildcards.corpus in NS_TARGETS:
        return [NARRATIVE_SENSE_OUT.of(wildcards.corpus, "story_scores.parquet")]
    return []
