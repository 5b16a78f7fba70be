# Tension: figures of the group means, the curves and the inflection rates.


rule plot_tension_by_group:
    input:
        groups=plan.tension.GROUP_MEANS,
    output:
        png=report(
            plan.tension.BY_GROUP_FIGURE.png,
            caption="../../report/tension_by_group.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        pdf=plan.tension.BY_GROUP_FIGURE.pdf,
    log:
        plan.tension.OUT.log("plot_tension_by_group"),
    wildcard_constraints:
        corpus=one_of(TENSION_MODELS["corpora"]),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=FIGURES["dpi"],
    script:
        "../../../scripts/plot_tension_by_group.py"


rule plot_tension_curves:
    input:
        curves=plan.tension.CURVES,
    output:
        png=report(
            plan.tension.CURVES_FIGURE.png,
            caption="../../report/tension_curves.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        pdf=plan.tension.CURVES_FIGURE.pdf,
    log:
        plan.tension.OUT.log("plot_tension_curves", "model", "judge"),
    wildcard_constraints:
        corpus=one_of(TENSION_MODELS["corpora"]),
        model=one_of(TENSION_MODELS["forecasters"]),
        judge=one_of(TENSION_MODELS["judges"]),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=FIGURES["dpi"],
        smoothing=TENSION_SETTINGS["smoothing"],
        angle=TENSION_SETTINGS["marked_angle"],
    script:
        "../../../scripts/plot_tension_curves.py"


rule plot_inflection_rates:
    input:
        groups=plan.tension.GROUP_MEANS,
    output:
        png=report(
            plan.tension.INFLECTION_RATES_FIGURE.png,
            caption="../../report/tension_inflection_rates.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        pdf=plan.tension.INFLECTION_RATES_FIGURE.pdf,
    log:
        plan.tension.OUT.log("plot_inflection_rates"),
    wildcard_constraints:
        corpus=one_of(TENSION_MODELS["corpora"]),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=FIGURES["dpi"],
    script:
        "../../../scripts/plot_inflection_rates.py"
