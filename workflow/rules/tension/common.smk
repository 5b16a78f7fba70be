# Tension: the config lookups and input functions of its rules (workflow/rules/tension.smk
# and the files it includes), kept apart from the rules as Snakemake's linter asks.
TENSION_OUT = plan.tension.OUT
TENSION = checked(plan.tension.choices, config)  # empty lists when the stage is off
TS = config["tension"]
TENSION_EMBEDDING_JUDGE = plan.tension.EMBEDDING_JUDGE
# LLM judges (models of `models`), checked on the calibration forecasts by their own rule
TENSION_MODEL_JUDGES = [j for j in TENSION["judges"] if j != TENSION_EMBEDDING_JUDGE]
TENSION_CHECKS = plan.tension.check_settings(config)  # validity thresholds, bootstrap
TENSION_INTERVALS = plan.tension.intervals(config)  # group CIs, min_group_size
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
    if TS["embedding"]["threshold"] is None:
        return {
            "calibration": TENSION_OUT.shared_table(
                f"calibration/{wildcards.model}.csv"
            )
        }
    return {}


def tension_judge_weights(wildcards):
    """The LLM judge's GGUF (none for a served judge)."""
    return weights_of(wildcards.judge)


def tension_calibration_judgments(wildcards):
    """Every LLM judge's verdicts on the forecaster's held-out calibration forecasts."""
    return expand(
        TENSION_OUT.shared("calibration/judgments/{model}/{judge}.parquet"),
        model=wildcards.model,
        judge=TENSION_MODEL_JUDGES,
    )


def tension_scores(wildcards):
    return expand(
        TENSION_OUT("stories/{model}/{judge}.parquet"),
        corpus=wildcards.corpus,
        model=TENSION["forecasters"],
        judge=TENSION["judges"],
    )


def tension_pmi(wildcards):
    return expand(
        TENSION_OUT("pmi/{model}.parquet"),
        corpus=wildcards.corpus,
        model=TENSION["pmi_models"],
    )


def tension_contrasts(wildcards):
    """Unpaired contrasts of a corpus without prompt pairs (HANNA is paired by prompt)."""
    if wildcards.corpus in SAMPLED_CORPORA:
        return []
    return plan.contrasts.contrasts(config, wildcards.corpus)


def tension_marked_angle(wildcards):
    """The vertex-angle threshold whose reversals the example curves mark (the middle one)."""
    angles = sorted(TS["curves"]["angles"])
    return angles[len(angles) // 2]
