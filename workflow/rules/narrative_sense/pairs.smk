# Narrative sense, stage 2: the PMI table of lemma pairs counted over the reference corpora.


rule count_word_pairs:
    input:
        lemmas=plan.narrative_sense.reference_lemmas(config),
    output:
        pairs=plan.narrative_sense.PMI,
        vocabulary=plan.narrative_sense.VOCABULARY,
    log:
        plan.narrative_sense.OUT.shared_log("count_word_pairs"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        min_stories=NARRATIVE_SENSE_SETTINGS["min_stories"],
        reference_max_tokens=NARRATIVE_SENSE_SETTINGS["reference_max_tokens"],
    script:
        "../../../scripts/count_word_pairs.py"
