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


def ns_cross_fitted(wildcards):
    return plan.narrative_sense.cross_fitted(config, wildcards.corpus)


def ns_score_inputs(wildcards):
    """A corpus's lemmas, and the PMI table or (cross-fitted) the other reference corpora's lemmas."""
    lemmas = NARRATIVE_SENSE_OUT.shared(f"lemmas/{wildcards.corpus}.parquet")
    if not plan.narrative_sense.cross_fitted(config, wildcards.corpus):
        return {
            "lemmas": lemmas,
            "pairs": NARRATIVE_SENSE_OUT.shared("pmi.parquet"),
            "vocabulary": NARRATIVE_SENSE_OUT.shared("vocabulary.parquet"),
        }
    others = [s for s in NS["reference"] if s != wildcards.corpus]
    return {
        "lemmas": lemmas,
        "reference": [
            NARRATIVE_SENSE_OUT.shared(f"lemmas/{s}.parquet") for s in others
        ],
    }
