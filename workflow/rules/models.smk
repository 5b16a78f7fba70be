rule materialize_model:
    output:
        gguf="resources/models/{model}.gguf",
    params:
        source=model_source,
    log:
        "logs/models/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    script:
        "../../scripts/materialize_model.py"
