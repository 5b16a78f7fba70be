rule compute_sequentiality:
    input:
        nll=plan.sequentiality.NLL,
        stories=plan.corpus.STORIES,
        counts=plan.corpus.SENTENCE_COUNTS,
    output:
        sentences=plan.sequentiality.SENTENCE_SCORES,
        stories=plan.sequentiality.STORY_SCORES,
    log:
        plan.sequentiality.OUT.log("compute_sequentiality", "model"),
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/compute_sequentiality.py"


rule collect_sequentiality_measures:
    input:
        stories=every_model(plan.sequentiality.STORY_SCORES),
    output:
        measures=plan.sequentiality.STORY_MEASURES,
    log:
        plan.sequentiality.OUT.log("collect_sequentiality_measures"),
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/collect_sequentiality_measures.py"
