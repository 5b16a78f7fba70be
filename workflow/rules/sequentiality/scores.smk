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


rule export_sequentiality_scores:
    input:
        sentences=plan.sequentiality.SENTENCE_SCORES,
        stories=plan.sequentiality.STORY_SCORES,
    output:
        sentences=report(
            plan.sequentiality.SENTENCE_SCORES_CSV,
            caption="../../report/sequentiality_sentence_scores.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        stories=report(
            plan.sequentiality.STORY_SCORES_CSV,
            caption="../../report/sequentiality_story_scores.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
    log:
        plan.sequentiality.OUT.log("export_sequentiality_scores", "model"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        tables={
            "sentences": "SENTENCE_SEQUENTIALITY",
            "stories": "STORY_SEQUENTIALITY",
        },
        label=corpus_label,
    script:
        "../../../scripts/export_csv.py"
