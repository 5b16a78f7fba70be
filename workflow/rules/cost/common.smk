# Cost: the lookups of its rule (cost/estimate.smk): what every language-model stage will cost
# depends on these settings (docs/cost_and_failures.md).
LM_COST_SETTINGS = exit_on_config_error(plan.cost.settings, config)
LM_COST_CORPORA = list(LM_COST_SETTINGS)
LM_COST_ESTIMATE = plan.cost.estimate_settings(
    config
)  # rates and the warning's ceiling
