# Sentence-level coherence covariates of the sequentiality regressions (docs/method.md §6).


rule compute_covariates:
    input:
        sentences=plan.corpus.SENTENCES,
        connectives=connective_lexicon(),
    output:
        covariates=plan.sequentiality.COVARIATES,
    log:
        plan.sequentiality.OUT.log("compute_covariates"),
    conda:
        "../../../envs/storyflow.yaml"
    threads: 2
    resources:
        mem_mb=3000,
    params:
        spacy_model=SPACY_MODEL,
        embedding_model=COVARIATE_SETTINGS["embedding_model"],
        windows=COVARIATE_SETTINGS["windows"],
        zipf_threshold=COVARIATE_SETTINGS["zipf_threshold"],
        relation_classifier=COVARIATE_SETTINGS["relation_classifier"],
        agent_resolver=COVARIATE_SETTINGS["agent_resolver"],
    script:
        "../../../scripts/compute_covariates.py"
