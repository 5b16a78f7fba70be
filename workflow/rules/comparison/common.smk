# Comparison: the config lookups and input functions of its rules (the other files of
# workflow/rules/comparison/), kept apart from the rules as Snakemake's linter asks; file names
# and corpora come from storyflow.plan.comparison.
# the correlations' percentile bootstrap: interval level, resamples, seed (the stats block)
BOOTSTRAP_INTERVAL = plan.statistics.interval(config)
# the story length the partial correlations control for
LENGTH_CONTROL = plan.comparison.length_control(config)
COMPARED_CORPORA = exit_on_config_error(
    plan.comparison.corpora, config
)  # [] when the comparison is off
STORY_MEASURE_FILES = plan.comparison.story_measure_files(config)


def story_measure_files(wildcards):
    """The story-measure tables the enabled measures write for the corpus."""
    return STORY_MEASURE_FILES[wildcards.corpus]


def comparison_contrasts(wildcards):
    return plan.comparison.contrasts_of(config, wildcards.corpus)


# the per-story files the story explorer shows beside the story table, per corpus and kind
EXPLORER_FILES = exit_on_config_error(plan.comparison.explorer_files, config)


def explorer_files(kind):
    """An input function: the corpus's files of one kind (plan.comparison.EXPLORER_INPUTS)."""

    def files(wildcards):
        return EXPLORER_FILES[wildcards.corpus][kind]

    return files
