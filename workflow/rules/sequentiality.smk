rule compute_sequentiality:
    input:
        nll="results/{corpus}/nll/{model}.parquet",
        stories="results/{corpus}/stories.parquet",
        counts="results/{corpus}/tables/sentence_counts.csv",
    output:
        sentences="results/{corpus}/sequentiality/{model}/sentences.parquet",
        stories="results/{corpus}/sequentiality/{model}/stories.parquet",
    log:
        "logs/{corpus}/compute_sequentiality/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    script:
        "../../scripts/compute_sequentiality.py"


rule collect_sequentiality_measures:
    input:
        stories=story_tables,
    output:
        measures="results/{corpus}/sequentiality/story_measures.parquet",
    log:
        "logs/{corpus}/collect_sequentiality_measures.log",
    conda:
        "../../envs/storyflow.yaml"
    script:
        "../../scripts/collect_sequentiality_measures.py"
