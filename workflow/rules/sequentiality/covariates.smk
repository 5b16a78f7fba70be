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
        spacy_model=config["sentences"]["spacy_model"],
        embedding_model=config["covariates"]["embedding_model"],
        windows=config["covariates"]["windows"],
        zipf_threshold=config["covariates"]["zipf_threshold"],
        relation_classifier=config["covariates"]["relation_classifier"],
        agent_resolver=config["covariates"]["agent_resolver"],
    script:
        "../../../scripts/compute_covariates.py"
