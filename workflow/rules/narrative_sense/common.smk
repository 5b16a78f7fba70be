# Narrative sense: the config lookups and input functions of its rules (workflow/rules/narrative_sense.smk
# and the files it includes), kept apart from the rules as Snakemake's linter asks.
NARRATIVE_SENSE_OUT = plan.narrative_sense.OUT
NS = config["narrative_sense"]
NS_TARGETS = plan.narrative_sense.targets(config)  # [] when the stage is off
NS_SOURCES = checked(plan.narrative_sense.sources, config)


def ns_source_input(wildcards):
    """The file a corpus is read from (the books' manifest for book passages)."""
    if wildcards.source == "hippocorpus":
        return hippocorpus_csv()
    return corpus_file(wildcards.source)


def ns_source_settings(wildcards):
    return plan.narrative_sense.lemma_settings(config, wildcards.source)
