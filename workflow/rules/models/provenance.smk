# Which weights every model ran with (storyflow.lm.weights.provenance): the model provenance
# table, with the hub commit of every hub model.


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
