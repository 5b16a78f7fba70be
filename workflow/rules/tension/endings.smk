# Tension, stage 2: K endings sampled by each forecaster at every cut.


rule sample_endings:
    input:
        unpack(model_weights),
        cuts=plan.tension.CUTS,
    output:
        endings=plan.tension.ENDINGS,
    log:
        plan.tension.OUT.log("sample_endings", "model"),
    wildcard_constraints:
        corpus=one_of(TENSION_MODELS["corpora"]),
        model=one_of(TENSION_MODELS["forecasters"]),
    conda:
        "../../../envs/storyflow.yaml"
    threads: model_threads
    resources:
        mem_mb=model_mem_mb,
        runtime=model_runtime,
        gpu=model_gpus,
    params:
        k=TENSION_SETTINGS["k"],
        sampling=TENSION_SETTINGS["sampling"],
        prompts=TENSION_SETTINGS["prompts"],
        model=model_settings,
    script:
        "../../../scripts/sample_endings.py"
