# Every corpus's stories split into sentences (results/<corpus>/corpus/; docs/architecture.md).


rule split_sentences:
    input:
        stories=plan.corpus.STORIES,
    output:
        sentences=plan.corpus.SENTENCES,
        counts=plan.corpus.SENTENCE_COUNTS,
    log:
        plan.corpus.OUT.log("split_sentences"),
    wildcard_constraints:
        corpus=one_of(["hippocorpus", *SAMPLED_CORPORA, *USER_CORPORA]),  # books come split
    conda:
        "../../../envs/storyflow.yaml"
    params:
        spacy_model=SPACY_MODEL,
        label=corpus_label,
    script:
        "../../../scripts/split_sentences.py"
