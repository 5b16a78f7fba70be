# Narrative sense: the config lookups and input functions of its rules (the other files of
# workflow/rules/narrative_sense/), kept apart from the rules as Snakemake's linter asks; file
# names and decisions come from storyflow.plan.narrative_sense.
NARRATIVE_SENSE_SETTINGS = plan.narrative_sense.settings(config)
NARRATIVE_SENSE_CORPORA = plan.narrative_sense.corpora(
    config
)  # [] when the stage is off
NARRATIVE_SENSE_SOURCES = exit_on_config_error(plan.narrative_sense.sources, config)


def narrative_sense_source_file(wildcards):
    """The file a corpus is read from (the books' manifest for book passages)."""
    if wildcards.source == "hippocorpus":
        return hippocorpus_csv()
    require_data(wildcards.source)
    return corpus_file(wildcards.source)


def narrative_sense_lemma_settings(wildcards):
    return plan.narrative_sense.lemma_settings(config, wildcards.source)


def narrative_sense_score_settings(wildcards):
    return plan.narrative_sense.score_settings(config, wildcards.corpus)


def narrative_sense_score_inputs(wildcards):
    return plan.narrative_sense.score_inputs(config, wildcards.corpus)
