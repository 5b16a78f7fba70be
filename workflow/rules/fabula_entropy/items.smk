# Fabula entropy, stage 1: original and corrupted story versions and their questions
# (docs/fabula_entropy.md).


rule make_fabula_items:
    input:
        stories=plan.corpus.STORIES,
        sentences=plan.corpus.SENTENCES,
        lexicon=fabula_entropy_lexicon(),
    output:
        versions=plan.fabula_entropy.VERSIONS,
        questions=plan.fabula_entropy.QUESTIONS,
        corruptions=plan.fabula_entropy.CORRUPTIONS,
        excluded=plan.fabula_entropy.EXCLUDED,
    log:
        plan.fabula_entropy.OUT.log("make_fabula_items"),
    wildcard_constraints:
        corpus=one_of(FABULA_ENTROPY_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=fabula_entropy_items,
        spacy_model=SPACY_MODEL,
    script:
        "../../../scripts/make_fabula_items.py"
