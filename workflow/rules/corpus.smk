rule download_hippocorpus:
    output:
        csv="resources/data/hippocorpus/hippoCorpusV2.csv",
    log:
        "logs/download_hippocorpus.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        url=corpora.download_url(config, "hippocorpus"),
    script:
        "../../scripts/download_hippocorpus.py"


rule sample_stories:
    input:
        csv=hippocorpus_csv(),
    output:
        stories="results/hippocorpus/stories.parquet",
        counts=report(
            "results/hippocorpus/tables/sample_counts.csv",
            caption="../report/sample_counts.rst",
            category="Corpus",
            subcategory="hippocorpus",
        ),
        excluded="results/hippocorpus/tables/excluded_stories.csv",
    log:
        "logs/hippocorpus/sample_stories.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        story_types=config["hippocorpus"]["story_types"],
        fraction=config["hippocorpus"]["sample"]["fraction"],
        per_type=config["hippocorpus"]["sample"]["per_type"],
        seed=config["hippocorpus"]["sample"]["seed"],
    script:
        "../../scripts/sample_stories.py"


rule read_csv_corpus:
    input:
        csv=user_corpus_csv,
    output:
        stories="results/{corpus}/stories.parquet",
        counts=report(
            "results/{corpus}/tables/sample_counts.csv",
            caption="../report/sample_counts.rst",
            category="Corpus",
            subcategory="{corpus}",
        ),
        excluded="results/{corpus}/tables/excluded_stories.csv",
    log:
        "logs/{corpus}/read_csv_corpus.log",
    wildcard_constraints:
        corpus=one_of(USER_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    params:
        columns=user_corpus_columns,
    script:
        "../../scripts/read_csv_corpus.py"


rule read_corpus_stories:
    input:
        csv=sampled_corpus_csv,
    output:
        stories="results/{corpus}/stories.parquet",
        counts=report(
            "results/{corpus}/tables/sample_counts.csv",
            caption="../report/sample_counts.rst",
            category="Corpus",
            subcategory="{corpus}",
        ),
        excluded="results/{corpus}/tables/excluded_stories.csv",
    log:
        "logs/{corpus}/read_corpus_stories.log",
    wildcard_constraints:
        corpus=one_of(SAMPLED_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    params:
        sample=story_sample,
    script:
        "../../scripts/read_corpus_stories.py"
