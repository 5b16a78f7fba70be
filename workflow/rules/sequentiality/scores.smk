rule compute_sequentiality:
    input:
        nll=SEQUENTIALITY_OUT("nll/{model}.parquet"),
        stories=CORPUS_OUT("stories.parquet"),
        counts=CORPUS_OUT.table("sentence_counts.csv"),
    output:
        sentences=SEQUENTIALITY_OUT("scores/{model}/sentences.parquet"),
        stories=SEQUENTIALITY_OUT("scores/{model}/stories.parquet"),
    log:
        "logs/{corpus}/compute_sequentiality/{model}.log",
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/compute_sequentiality.py"


rule collect_sequentiality_measures:
    input:
        stories=story_tables,
    output:
        measures=SEQUENTIALITY_OUT("story_measures.parquet"),
    log:
        "logs/{corpus}/collect_sequentiality_measures.log",
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/collect_sequentiality_measures.py"
