# Tension: the config lookups and input functions of its rules (the other files of
# workflow/rules/tension/), kept apart from the rules as Snakemake's linter asks; file names,
# models and settings come from storyflow.plan.tension.
TENSION_MODELS = exit_on_config_error(
    plan.tension.models_and_corpora, config
)  # empty lists when the stage is off
TENSION_SETTINGS = plan.tension.settings(config)
TENSION_EMBEDDING_JUDGE = plan.tension.EMBEDDING_JUDGE
# LLM judges (models of `models`), checked on the calibration forecasts by their own rule
TENSION_MODEL_JUDGES = [
    j for j in TENSION_MODELS["judges"] if j != TENSION_EMBEDDING_JUDGE
]
# the validity checks of every forecaster (and of the judges on its forecasts)
TENSION_VALIDITY = plan.tension.validity_tables(config)


def tension_judge(wildcards):
    return plan.tension.judge_settings(config, wildcards.judge)


def tension_judge_model(wildcards):
    """The LLM judge's model settings ({} for the embedding judge)."""
    if wildcards.judge in MODEL_SPECS:
        return MODEL_SPECS[wildcards.judge].scoring_settings()
    return {}


def tension_judge_inputs(wildcards):
    """The forecaster's calibration table (embedding judge without a fixed threshold) or the
    LLM judge's GGUF (none for a served judge)."""
    if wildcards.judge in MODEL_SPECS:
        return weights_of(wildcards.judge)
    if TENSION_SETTINGS["threshold"] is None:
        return {"calibration": fill(plan.tension.CALIBRATION, model=wildcards.model)}
    return {}


def tension_judge_weights(wildcards):
    """The LLM judge's GGUF (none for a served judge)."""
    return weights_of(wildcards.judge)


def tension_calibration_judgments(wildcards):
    """Every LLM judge's verdicts on the forecaster's held-out calibration forecasts."""
    return expand(
        plan.tension.CALIBRATION_JUDGMENTS,
        model=wildcards.model,
        judge=TENSION_MODEL_JUDGES,
    )


def tension_scores(wildcards):
    return expand(
        plan.tension.STORY_SCORES,
        corpus=wildcards.corpus,
        model=TENSION_MODELS["forecasters"],
        judge=TENSION_MODELS["judges"],
    )


def tension_pmi(wildcards):
    return expand(
        plan.tension.PMI,
        corpus=wildcards.corpus,
        model=TENSION_MODELS["pmi_models"],
    )


def tension_summary_settings(wildcards):
    return plan.tension.summary_settings(config, wildcards.corpus)
