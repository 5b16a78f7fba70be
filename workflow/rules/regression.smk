# Mixed-effects regressions of sequentiality on the covariates (docs/method.md §7,
# docs/regression.md).


rule fit_regressions:
    input:
        sequentiality=sentence_tables,
        covariates="results/{corpus}/covariates.parquet",
        story_scores=narrative_sense_scores,
    output:
        coefficients=report(
            "results/{corpus}/tables/regression_coefficients.csv",
            caption="../report/regression_coefficients_table.rst",
            category="Regression",
            subcategory="{corpus}",
        ),
        tables=expand(
            "results/{{corpus}}/tables/regression_{spec}.csv", spec=REGRESSION_SPECS
        ),
        diagnostics=report(
            "results/{corpus}/tables/regression_diagnostics.csv",
            caption="../report/regression_diagnostics.rst",
            category="Regression",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/fit_regressions.log",
    conda:
        "../../envs/regression.yaml"
    params:
        specs=REGRESSION_SPECS,
        skipped=REGRESSION_SKIPPED,
        models=SEQUENTIALITY_MODELS,
        formulation=config["regression"]["formulation"],
        fdr_alpha=config["regression"]["fdr_alpha"],
        confidence=config["stats"]["confidence"],
    script:
        "../../scripts/fit_regressions.py"


rule plot_regression_coefficients:
    input:
        table="results/{corpus}/tables/regression_coefficients.csv",
    output:
        png=report(
            "results/{corpus}/figures/regression_coefficients.png",
            caption="../report/regression_coefficients_figure.rst",
            category="Regression",
            subcategory="{corpus}",
        ),
        pdf="results/{corpus}/figures/regression_coefficients.pdf",
    log:
        "logs/{corpus}/plot_regression_coefficients.log",
    conda:
        "../../envs/regression.yaml"
    params:
        dpi=config["figures"]["dpi"],
        width_per_panel=config["figures"]["width_per_panel"],
    script:
        "../../scripts/plot_coefficients.py"
