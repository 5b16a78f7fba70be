# The corpora: each read (or sampled) into a stories table, then split into sentences
# (results/<corpus>/corpus/; docs/architecture.md).


include: "corpus/common.smk"


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
        stories=CORPUS_OUT.of("hippocorpus", "stories.parquet"),
        counts=report(
            CORPUS_OUT.of("hippocorpus", "tables/sample_counts.csv"),
            caption="../report/sample_counts.rst",
            category="Corpus",
            subcategory="hippocorpus",
        ),
        excluded=CORPUS_OUT.of("hippocorpus", "tables/excluded_stories.csv"),
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
        stories=CORPUS_OUT("stories.parquet"),
        counts=report(
            CORPUS_OUT.table("sample_counts.csv"),
            caption="../report/sample_counts.rst",
            category="Corpus",
            subcategory="{corpus}",
        ),
        excluded=CORPUS_OUT.table("excluded_stories.csv"),
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
        stories=CORPUS_OUT("stories.parquet"),
        counts=report(
            CORPUS_OUT.table("sample_counts.csv"),
            caption="../report/sample_counts.rst",
            category="Corpus",
            subcategory="{corpus}",
        ),
        excluded=CORPUS_OUT.table("excluded_stories.csv"),
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


rule split_sentences:
    input:
        stories=CORPUS_OUT("stories.parquet"),
    output:
        sentences=CORPUS_OUT("sentences.parquet"),
        counts=CORPUS_OUT.table("sentence_counts.csv"),
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
