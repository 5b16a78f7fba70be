# Comparison: the config lookups and input functions of its rules (workflow/rules/comparison.smk
# and the files it includes), kept apart from the rules as Snakemake's linter asks.
COMPARISON_OUT = plan.comparison.OUT
COMPARISON = config["comparison"]
# the correlations' percentile bootstrap: resamples, seed, interval level
COMPARISON_BOOTSTRAP = {
    "n_resamples": COMPARISON["bootstrap"],
    "seed": COMPARISON["seed"],
    "confidence": config["stats"]["confidence"],
}
COMPARED = checked(plan.comparison.corpora, config)  # [] when the comparison is off
STORY_MEASURE_FILES = plan.comparison.story_measure_files(config)


def story_measure_files(wildcards):
    """The story-measure tables the enabled measures write for the corpus."""
    return STORY_MEASURE_FILES[wildcards.corpus]


def comparison_contrasts(wildcards):
    return plan.comparison.contrasts_of(config, wildcards.corpus)
