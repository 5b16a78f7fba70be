# Narrative sense, stage 1: each source corpus's stories as content lemmas (docs/narrative_sense.md).


rule lemmatize_stories:
    input:
        data=narrative_sense_source_file,
    output:
        lemmas=plan.narrative_sense.LEMMAS,
    log:
        plan.narrative_sense.OUT.shared_log("lemmatize_stories", "source"),
    wildcard_constraints:
        source=one_of(NARRATIVE_SENSE_SOURCES),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=narrative_sense_lemma_settings,
        spacy_model=SPACY_MODEL,
    script:
        "../../../scripts/lemmatize_stories.py"
