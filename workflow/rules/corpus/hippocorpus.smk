# HIPPOCORPUS: the release (downloaded when no mirror holds it) and the sample of stories analysed.


rule download_hippocorpus:
    output:
        csv=plan.corpus.HIPPOCORPUS_DOWNLOAD,
    log:
        plan.corpus.OUT.shared_log("download_hippocorpus"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        url=corpora.download_url(config, "hippocorpus"),
    script:
        "../../../scripts/download_hippocorpus.py"


rule sample_stories:
    input:
        csv=hippocorpus_csv,
    output:
        stories=fill(plan.corpus.STORIES, corpus="hippocorpus"),
        counts=report(
            fill(plan.corpus.SAMPLE_COUNTS, corpus="hippocorpus"),
            caption="../../report/sample_counts.rst",
            category="Corpus",
            subcategory="hippocorpus",
        ),
        excluded=fill(plan.corpus.EXCLUDED_STORIES, corpus="hippocorpus"),
    log:
        fill(plan.corpus.OUT.log("sample_stories"), corpus="hippocorpus"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        story_types=HIPPOCORPUS_SAMPLE["story_types"],
        fraction=HIPPOCORPUS_SAMPLE["fraction"],
        per_type=HIPPOCORPUS_SAMPLE["per_type"],
        seed=HIPPOCORPUS_SAMPLE["seed"],
        paired=HIPPOCORPUS_SAMPLE["paired"],
    script:
        "../../../scripts/sample_stories.py"
