# Tension, stage 1: where each story is cut to forecast its ending (docs/tension.md).


rule plan_tension_cuts:
    input:
        unpack(model_weights),
        stories=plan.corpus.STORIES,
        sentences=plan.corpus.SENTENCES,
    output:
        cuts=plan.tension.CUTS,
        excluded=plan.tension.CUTS_EXCLUDED,
    log:
        plan.tension.OUT.log("plan_tension_cuts", "model"),
    wildcard_constraints:
        corpus=one_of(TENSION_MODELS["corpora"]),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        cuts=TENSION_SETTINGS["cuts"],
        model=model_settings,
    script:
        "../../../scripts/plan_tension_cuts.py"
