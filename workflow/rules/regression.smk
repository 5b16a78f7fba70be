# Mixed-effects regressions of sequentiality on the covariates (docs/method.md §7,
# docs/regression.md).


def regression_plan():
    """Regression specifications to fit, and those skipped with the reason (history not scored)."""
    if not is_activated("regression"):
        return [], {}
    reg, nll = config["regression"], config["nll"]
    if not is_activated("covariates"):
        raise ValueError("config: regression.enabled needs covariates.enabled")
    if reg["formulation"] not in nll["formulations"]:
        raise ValueError(
            f"config: regression.formulation {reg['formulation']!r} is not in nll.formulations"
        )
    fitted, skipped = [], {}
    for history in reg["histories"]:
        if int(history) not in config["covariates"]["windows"]:
            raise ValueError(
                f"config: regression history {history} needs covariate window {history}"
            )
        for kind in reg["kinds"]:
            if int(history) <= nll["max_history"]:
                fitted.append(f"{kind}_h{history}")
            else:
                skipped[f"{kind}_h{history}"] = (
                    f"history {history} not scored (nll.max_history = {nll['max_history']})"
                )
    if not fitted:
        raise ValueError("config: no regression history is scored (see nll.max_history)")
    for spec, reason in skipped.items():
        logger.warning(f"regression {spec} skipped: {reason}")
    return fitted, skipped


REGRESSION_SPECS, REGRESSION_SKIPPED = regression_plan()


def regression_outputs():
    """The regression tables and figure of HIPPOCORPUS, when the stage is on."""
    if not is_activated("regression"):
        return []
    return [
        "results/hippocorpus/tables/regression_coefficients.csv",
        "results/hippocorpus/tables/regression_diagnostics.csv",
        "results/hippocorpus/figures/regression_coefficients.png",
    ]


def narrative_sense_scores(wildcards):
    """The corpus's narrative-sense story scores, a story-level regression covariate when the
    narrative-sense stage scores this corpus and regression.narrative_sense is on; else nothing."""
    if (
        is_activated("narrative_sense")
        and config["regression"]["narrative_sense"]
        and wildcards.corpus in config["narrative_sense"]["targets"]
    ):
        return [f"results/{wildcards.corpus}/narrative_sense/story_scores.parquet"]
    return []


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
        models=MODELS,
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
