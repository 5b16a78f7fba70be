rule split_sentences:
    input:
        stories="results/{corpus}/stories.parquet",
    output:
        sentences="results/{corpus}/sentences.parquet",
        counts="results/{corpus}/tables/sentence_counts.csv",
    log:
        "logs/{corpus}/split_sentences.log",
    wildcard_constraints:
        corpus=one_of(["hippocorpus", *SAMPLED_CORPORA, *USER_CORPORA]),  # books come split
    conda:
        "../../envs/storyflow.yaml"
    params:
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/split_sentences.py"
