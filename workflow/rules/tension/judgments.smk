# Tension, stage 3: each judge's verdicts on the endings, the no-rate curves and story scores.


rule judge_endings:
    input:
        unpack(tension_judge_inputs),
        endings=plan.tension.ENDINGS,
        cuts=plan.tension.CUTS,
    output:
        judgments=plan.tension.JUDGMENTS,
        curves=plan.tension.CURVES,
        stories=plan.tension.STORY_SCORES,
    log:
        plan.tension.OUT.log("judge_endings", "model", "judge"),
    wildcard_constraints:
        corpus=one_of(TENSION_MODELS["corpora"]),
        model=one_of(TENSION_MODELS["forecasters"]),
        judge=one_of(TENSION_MODELS["judges"]),
    conda:
        "../../../envs/storyflow.yaml"
    threads: judge_threads
    resources:
        mem_mb=judge_mem_mb,
        runtime=model_runtime,
        gpu=judge_gpus,
    params:
        judge=tension_judge,
        judge_model=tension_judge_model,
        curves=TENSION_SETTINGS["curves"],
    script:
        "../../../scripts/judge_endings.py"
