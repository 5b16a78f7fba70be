# Tension: the PMI companion of the no-rate (likelihood of the true continuation).


rule score_tension_pmi:
    input:
        unpack(model_weights),
        cuts=plan.tension.CUTS,
        sentences=plan.corpus.SENTENCES,
    output:
        pmi=plan.tension.PMI,
    log:
        plan.tension.OUT.log("score_tension_pmi", "model"),
    wildcard_constraints:
        corpus=one_of(TENSION_MODELS["corpora"]),
        model=one_of(TENSION_MODELS["pmi_models"]),
    conda:
        "../../../envs/storyflow.yaml"
    threads: model_threads
    resources:
        mem_mb=model_mem_mb,
        runtime=model_runtime,
        gpu=model_gpus,
    params:
        model=model_settings,
    script:
        "../../../scripts/score_tension_pmi.py"
