rule split_sentences:
    input:
        stories="results/{corpus}/stories.parquet",
    output:
        sentences="results/{corpus}/sentences.parquet",
        counts="results/{corpus}/tables/sentence_counts.csv",
    params:
        spacy_model=config["sentences"]["spacy_model"],
    log:
        "logs/{corpus}/split_sentences.log",
    conda:
        "../../envs/storyflow.yaml"
    script:
        "../../scripts/split_sentences.py"
