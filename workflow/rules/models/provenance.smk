# Which weights every model ran with (storyflow.lm.weights.provenance): the model provenance
# table, with the hub commit of every hub model; and what the run ran with (storyflow.versions):
# storyflow's version and its libraries', rewritten when a version changes and for nothing else.


rule record_model_provenance:
    input:
        weights=[
            plan.models.weights(MODEL_SPECS[name])
            for name in MODELS_IN_USE
            if not MODEL_SPECS[name].served
        ],
    output:
        table=report(
            plan.models.PROVENANCE,
            caption="../../report/model_provenance.rst",
            category="Models",
        ),
    log:
        plan.models.OUT.shared_log("record_model_provenance"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        models=plan.models.entries(config, MODELS_IN_USE),
    script:
        "../../../scripts/record_model_provenance.py"


rule record_run:
    output:
        table=report(
            plan.layout.RUN_RECORD,
            caption="../../report/run_record.rst",
            category="Models",
        ),
    log:
        plan.models.OUT.shared_log("record_run"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        versions=RUN_VERSIONS,
    script:
        "../../../scripts/record_run.py"
