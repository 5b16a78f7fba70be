# Mixed-effects regressions of sequentiality on the covariates (docs/method.md §7,
# docs/regression.md).


rule fit_regressions:
    input:
        sequentiality=regression_sentence_tables,
        covariates=SEQUENTIALITY_OUT("covariates.parquet"),
        story_scores=narrative_sense_scores,
    output:
        coefficients=report(
            SEQUENTIALITY_OUT.table("regression_coefficients.csv"),
            caption="../../report/regression_coefficients_table.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        tables=expand(
            SEQUENTIALITY_OUT.table("regression_{spec}.csv"),
            spec=REGRESSION_SPECS,
            allow_missing=True,
        ),
        diagnostics=report(
            SEQUENTIALITY_OUT.table("regression_diagnostics.csv"),
            caption="../../report/regression_diagnostics.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/fit_regressions.log",
    wildcard_constraints:
        corpus=one_of(REGRESSION_CORPORA),
    conda:
        "../../../envs/regression.yaml"
    params:
        specs=REGRESSION_SPECS,
        skipped=REGRESSION_SKIPPED,
        models=REGRESSION_MODELS,
        formulation=config["regression"]["formulation"],
        fdr_alpha=config["regression"]["fdr_alpha"],
        confidence=config["stats"]["confidence"],
    script:
        "../../../scripts/fit_regressions.py"


rule plot_regression_coefficients:
    input:
        table=SEQUENTIALITY_OUT.table("regression_coefficients.csv"),
    output:
        png=report(
            SEQUENTIALITY_OUT.figure("regression_coefficients.png"),
            caption="../../report/regression_coefficients_figure.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        pdf=SEQUENTIALITY_OUT.figure("regression_coefficients.pdf"),
    log:
        "logs/{corpus}/plot_regression_coefficients.log",
    conda:
        "../../../envs/regression.yaml"
    params:
        dpi=config["figures"]["dpi"],
        width_per_panel=config["figures"]["width_per_panel"],
    script:
        "../../../scripts/plot_coefficients.py"
