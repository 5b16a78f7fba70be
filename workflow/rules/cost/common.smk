# Cost: the lookups of its rule (cost/estimate.smk): what every language-model stage will cost
# depends on these settings (docs/cost_and_failures.md).
LM_COST_SETTINGS = exit_on_config_error(plan.cost.settings, config)
LM_COST_CORPORA = list(LM_COST_SETTINGS)
LM_COST_ESTIMATE = plan.cost.estimate_settings(
    config
)  # rates and the warning's ceiling
# The plan in words, logged once when the workflow is planned: measures x corpora x models,
# the models' rates and where the cost tables go; and each corpus of the user's that lacks the
# topic column of the topic formulation (storyflow.plan.summary).
logger.info(
    "storyflow: "
    + "\n".join(exit_on_config_error(plan.summary.lines, config, READ_CORPORA))
)
for _note in plan.summary.topic_notes(config):
    logger.info(f"storyflow: {_note}")
