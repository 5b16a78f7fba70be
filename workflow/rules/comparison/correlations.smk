# Comparison: Spearman correlations between the measures, and each measure's agreement across models.


rule correlate_measures:
    input:
        table=plan.comparison.STORIES,
        verdicts=plan.comparison.MEASURE_VERDICTS,
    output:
        table=report(
            plan.comparison.MEASURE_CORRELATIONS,
            caption="../../report/measure_correlations_table.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        plan.comparison.OUT.log("correlate_measures"),
    wildcard_constraints:
        corpus=one_of(COMPARED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        length=LENGTH_CONTROL,
        interval=BOOTSTRAP_INTERVAL,
    script:
        "../../../scripts/correlate_measures.py"


rule compute_model_agreement:
    input:
        measures=story_measure_files,
        verdicts=plan.comparison.MEASURE_VERDICTS,
    output:
        table=report(
            plan.comparison.MODEL_AGREEMENT,
            caption="../../report/model_agreement.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        plan.comparison.OUT.log("compute_model_agreement"),
    wildcard_constraints:
        corpus=one_of(COMPARED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        interval=BOOTSTRAP_INTERVAL,
    script:
        "../../../scripts/compute_model_agreement.py"
