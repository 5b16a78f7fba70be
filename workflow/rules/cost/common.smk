# Cost: the lookups of its rule (cost/estimate.smk): what every language-model stage will cost
# depends on these settings (docs/cost_and_failures.md).
from storyflow.plan import nll_minutes as plan_nll_minutes

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
# The NLL stage's minutes on each corpus of the user's, predicted from its words before any job
# (storyflow.plan.nll_minutes); the run's nll_estimate.csv counts the tokens exactly.
for _line in exit_on_config_error(plan_nll_minutes.planned_lines, config):
    logger.info(f"storyflow: {_line}")
