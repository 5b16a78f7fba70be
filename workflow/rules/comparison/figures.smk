# Comparison: the figures.


rule plot_measure_correlations:
    input:
        table=plan.comparison.MEASURE_CORRELATIONS,
    output:
        png=report(
            plan.comparison.CORRELATIONS_FIGURE.png,
            caption="../../report/measure_correlations_figure.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
        pdf=plan.comparison.CORRELATIONS_FIGURE.pdf,
    log:
        plan.comparison.OUT.log("plot_measure_correlations"),
    wildcard_constraints:
        corpus=one_of(COMPARED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        length=LENGTH_CONTROL,
        dpi=FIGURES["dpi"],
    script:
        "../../../scripts/plot_measure_correlations.py"


rule plot_measure_separation:
    input:
        table=plan.comparison.MEASURE_SEPARATION,
    output:
        png=report(
            plan.comparison.SEPARATION_FIGURE.png,
            caption="../../report/measure_separation_figure.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
        pdf=plan.comparison.SEPARATION_FIGURE.pdf,
    log:
        plan.comparison.OUT.log("plot_measure_separation"),
    wildcard_constraints:
        corpus=one_of(COMPARED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=FIGURES["dpi"],
    script:
        "../../../scripts/plot_measure_separation.py"
