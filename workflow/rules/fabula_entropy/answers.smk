# Fabula entropy, stage 2: every reader's P(yes) of every question.


rule answer_fabula_questions:
    input:
        unpack(model_weights),
        versions=plan.fabula_entropy.VERSIONS,
        questions=plan.fabula_entropy.QUESTIONS,
    output:
        answers=plan.fabula_entropy.ANSWERS,
        cost=plan.fabula_entropy.COST,
    log:
        plan.fabula_entropy.OUT.log("answer_fabula_questions", "model"),
    wildcard_constraints:
        corpus=one_of(FABULA_ENTROPY_CORPORA),
        model=one_of(FABULA_ENTROPY_READERS),
    conda:
        "../../../envs/storyflow.yaml"
    threads: model_threads
    resources:
        mem_mb=model_mem_mb,
        runtime=model_runtime,
        gpu=model_gpus,
    params:
        model=model_settings,
        reading=FABULA_ENTROPY_READING,
    script:
        "../../../scripts/answer_fabula_questions.py"
