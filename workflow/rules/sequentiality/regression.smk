# Mixed-effects regressions of sequentiality on the covariates (docs/method.md §7,
# docs/regression.md).


rule fit_regressions:
    input:
        sequentiality=regression_sentence_tables,
        covariates=plan.sequentiality.COVARIATES,
        story_scores=narrative_sense_scores,
    output:
        coefficients=report(
            plan.sequentiality.REGRESSION_COEFFICIENTS,
            caption="../../report/regression_coefficients_table.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        tables=expand(
            plan.sequentiality.REGRESSION_TABLE,
            spec=REGRESSION_SPECS,
            allow_missing=True,
        ),
        diagnostics=report(
            plan.sequentiality.REGRESSION_DIAGNOSTICS,
            caption="../../report/regression_diagnostics.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
    log:
        plan.sequentiality.OUT.log("fit_regressions"),
    wildcard_constraints:
        corpus=one_of(REGRESSION_CORPORA),
    conda:
        "../../../envs/regression.yaml"
    params:
        specs=REGRESSION_SPECS,
        skipped=REGRESSION_SKIPPED,
        models=REGRESSION_MODELS,
        formulation=REGRESSION_SETTINGS["formulation"],
        fdr_alpha=REGRESSION_SETTINGS["fdr_alpha"],
        confidence=STATISTICS["confidence"],
    script:
        "../../../scripts/fit_regressions.py"


rule plot_regression_coefficients:
    input:
        table=plan.sequentiality.REGRESSION_COEFFICIENTS,
    output:
        png=report(
            plan.sequentiality.REGRESSION_FIGURE.png,
            caption="../../report/regression_coefficients_figure.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        pdf=plan.sequentiality.REGRESSION_FIGURE.pdf,
    log:
        plan.sequentiality.OUT.log("plot_regression_coefficients"),
    conda:
        "../../../envs/regression.yaml"
    params:
        dpi=FIGURES["dpi"],
        width_per_panel=FIGURES["width_per_panel"],
    script:
        "../../../scripts/plot_coefficients.py"
