# Tension: the forecasters' ROCStories forecasts, the embedding judge's calibration, the LLM judges'
# verdicts on them and every forecaster's validity checks (docs/validity.md).


rule sample_calibration_endings:
    input:
        unpack(model_weights),
        stories=fill(plan.corpus.STORIES, corpus=plan.tension.CALIBRATION_CORPUS),
    output:
        endings=plan.tension.CALIBRATION_ENDINGS,
    log:
        plan.tension.OUT.shared_log("sample_calibration_endings", "model"),
    wildcard_constraints:
        model=one_of(TENSION_MODELS["forecasters"]),
    conda:
        "../../../envs/storyflow.yaml"
    threads: model_threads
    resources:
        mem_mb=model_mem_mb,
        runtime=model_runtime,
        gpu=model_gpus,
    params:
        stories=TENSION_SETTINGS["calibration_stories"],
        k=TENSION_SETTINGS["k"],
        sampling=TENSION_SETTINGS["sampling"],
        prompts=TENSION_SETTINGS["prompts"],
        model=model_settings,
    script:
        "../../../scripts/sample_calibration_endings.py"


rule calibrate_tension_judge:
    input:
        stories=fill(plan.corpus.STORIES, corpus=plan.tension.CALIBRATION_CORPUS),
        endings=plan.tension.CALIBRATION_ENDINGS,
    output:
        table=report(
            plan.tension.CALIBRATION,
            caption="../../report/tension_calibration.rst",
            category="Tension",
        ),
        cosines=plan.tension.CALIBRATION_COSINES,
    log:
        plan.tension.OUT.shared_log("calibrate_tension_judge", "model"),
    wildcard_constraints:
        model=one_of(TENSION_MODELS["forecasters"]),
    conda:
        "../../../envs/storyflow.yaml"
    threads: 2
    params:
        embedding_model=TENSION_SETTINGS["embedding_model"],
        chunk_words=TENSION_SETTINGS["chunk_words"],
        seed=TENSION_SETTINGS["calibration_seed"],
    script:
        "../../../scripts/calibrate_tension_judge.py"


rule judge_calibration_endings:
    input:
        unpack(tension_judge_weights),
        stories=fill(plan.corpus.STORIES, corpus=plan.tension.CALIBRATION_CORPUS),
        endings=plan.tension.CALIBRATION_ENDINGS,
    output:
        judgments=plan.tension.CALIBRATION_JUDGMENTS,
    log:
        plan.tension.OUT.shared_log("judge_calibration_endings", "model", "judge"),
    wildcard_constraints:
        model=one_of(TENSION_MODELS["forecasters"]),
        judge=one_of(TENSION_MODEL_JUDGES),
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
        seed=TENSION_SETTINGS["calibration_seed"],
    script:
        "../../../scripts/judge_calibration_endings.py"


rule check_tension_validity:
    input:
        cosines=plan.tension.CALIBRATION_COSINES,
        calibration=plan.tension.CALIBRATION,
        judgments=tension_calibration_judgments,
    output:
        table=report(
            plan.tension.VALIDITY,
            caption="../../report/tension_validity.rst",
            category="Tension",
        ),
    log:
        plan.tension.OUT.shared_log("check_tension_validity", "model"),
    wildcard_constraints:
        model=one_of(TENSION_MODELS["forecasters"]),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        forecaster=lambda wildcards: wildcards.model,
        threshold=TENSION_SETTINGS["threshold"],
        judges=TENSION_MODELS["judges"],
        model_judges=TENSION_MODEL_JUDGES,
        settings=TENSION_SETTINGS["checks"],
    script:
        "../../../scripts/check_tension_validity.py"
