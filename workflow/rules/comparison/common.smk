# Comparison: the config lookups and input functions of its rules (the other files of
# workflow/rules/comparison/), kept apart from the rules as Snakemake's linter asks; file names
# and corpora come from storyflow.plan.comparison.
# the correlations' percentile bootstrap: interval level, resamples, seed (the stats block)
BOOTSTRAP_INTERVAL = plan.statistics.interval(config)
COMPARED_CORPORA = exit_on_config_error(
    plan.comparison.corpora, config
)  # [] when the comparison is off
STORY_MEASURE_FILES = plan.comparison.story_measure_files(config)


def story_measure_files(wildcards):
    """The story-measure tables the enabled measures write for the corpus."""
    return STORY_MEASURE_FILES[wildcards.corpus]


def comparison_contrasts(wildcards):
    return plan.comparison.contrasts_of(config, wildcards.corpus)
