# The models' weights, put on disk (storyflow.lm.weights).


rule materialize_model:
    output:
        weights=plan.models.WEIGHTS,
    log:
        plan.models.OUT.shared_log("materialize_model", "model"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        source=model_source,
    script:
        "../../../scripts/materialize_model.py"


rule materialize_checkpoint:
    output:
        manifest=plan.models.CHECKPOINT,
    log:
        plan.models.OUT.shared_log("materialize_checkpoint", "model"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        source=model_source,
    script:
        "../../../scripts/materialize_checkpoint.py"
