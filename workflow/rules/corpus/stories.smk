# The other corpora read into stories tables: the user's CSV corpora, HANNA and ROCStories.


rule read_csv_corpus:
    input:
        csv=user_corpus_csv,
    output:
        stories=plan.corpus.STORIES,
        counts=report(
            plan.corpus.SAMPLE_COUNTS,
            caption="../../report/sample_counts.rst",
            category="Corpus",
            subcategory="{corpus}",
        ),
        excluded=plan.corpus.EXCLUDED_STORIES,
    log:
        plan.corpus.OUT.log("read_csv_corpus"),
    wildcard_constraints:
        corpus=one_of(USER_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        columns=user_corpus_columns,
    script:
        "../../../scripts/read_csv_corpus.py"


rule read_corpus_stories:
    input:
        csv=sampled_corpus_csv,
    output:
        stories=plan.corpus.STORIES,
        counts=report(
            plan.corpus.SAMPLE_COUNTS,
            caption="../../report/sample_counts.rst",
            category="Corpus",
            subcategory="{corpus}",
        ),
        excluded=plan.corpus.EXCLUDED_STORIES,
    log:
        plan.corpus.OUT.log("read_corpus_stories"),
    wildcard_constraints:
        corpus=one_of(SAMPLED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        sample=story_sample,
    script:
        "../../../scripts/read_corpus_stories.py"
