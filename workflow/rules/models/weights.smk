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
    input:
        # a checkpoint folder's files (none for a hub id): one repaired or replaced re-runs
        # the manifest, and so every job that read the checkpoint
        checkpoint_files,
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
