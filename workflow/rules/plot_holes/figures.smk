# Plot holes: the CEEval-Full figures.


rule plot_ceeval:
    input:
        scores=plan.plot_holes.SCORES,
        answers=plan.plot_holes.SCORED_ANSWERS,
        made=plot_holes_made,
    output:
        png=report(
            plan.plot_holes.CEEVAL_FIGURE.png,
            caption="../../report/plot_holes_ceeval.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
        pdf=plan.plot_holes.CEEVAL_FIGURE.pdf,
        length_png=report(
            plan.plot_holes.CEEVAL_BY_LENGTH_FIGURE.png,
            caption="../../report/plot_holes_length.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
        length_pdf=plan.plot_holes.CEEVAL_BY_LENGTH_FIGURE.pdf,
    log:
        plan.plot_holes.OUT.log("plot_ceeval"),
    wildcard_constraints:
        corpus=one_of(PLOT_HOLES_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=FIGURES["dpi"],
        confidence=STATISTICS["confidence"],
    script:
        "../../../scripts/plot_ceeval.py"
