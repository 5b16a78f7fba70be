# The models' weights, put on disk (storyflow.lm.weights).


rule materialize_model:
    output:
        gguf="resources/models/{model}.gguf",
    log:
        "logs/models/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        source=model_source,
    script:
        "../../scripts/materialize_model.py"
