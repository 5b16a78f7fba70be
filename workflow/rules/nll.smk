rule score_nll:
    input:
        sentences="results/{corpus}/sentences.parquet",
        stories="results/{corpus}/stories.parquet",
        gguf="resources/models/{model}.gguf",
    output:
        nll="results/{corpus}/nll/{model}.parquet",
    params:
        settings=nll_settings,
    threads: 2
    resources:
        mem_mb=4000,
    log:
        "logs/{corpus}/score_nll/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    script:
        "../../scripts/score_nll.py"
