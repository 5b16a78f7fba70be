# Comparison: how well each measure separates the corpus's groups.


rule compute_measure_separation:
    input:
        table=plan.comparison.STORIES,
        units=plan.comparison.MEASURE_UNITS,
        verdicts=plan.comparison.MEASURE_VERDICTS,
    output:
        table=report(
            plan.comparison.MEASURE_SEPARATION,
            caption="../../report/measure_separation_table.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        plan.comparison.OUT.log("compute_measure_separation"),
    wildcard_constraints:
        corpus=one_of(COMPARED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        contrasts=comparison_contrasts,
        confidence=STATISTICS["confidence"],
        min_group_size=STATISTICS["min_group_size"],
    script:
        "../../../scripts/compute_measure_separation.py"
