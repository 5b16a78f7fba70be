# Fabula entropy: the figures.


rule plot_fabula_entropy:
    input:
        indices=plan.fabula_entropy.STORY_INDICES,
        dose=plan.fabula_entropy.DOSE_RESPONSE,
    output:
        distributions=report(
            plan.fabula_entropy.DISTRIBUTIONS_FIGURE.png,
            caption="../../report/fabula_entropy_distributions.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        distributions_pdf=plan.fabula_entropy.DISTRIBUTIONS_FIGURE.pdf,
        dose=report(
            plan.fabula_entropy.DOSE_RESPONSE_FIGURE.png,
            caption="../../report/fabula_entropy_dose_response.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        dose_pdf=plan.fabula_entropy.DOSE_RESPONSE_FIGURE.pdf,
    log:
        plan.fabula_entropy.OUT.log("plot_fabula_entropy"),
    wildcard_constraints:
        corpus=one_of(FABULA_ENTROPY_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=FIGURES["dpi"],
    script:
        "../../../scripts/plot_fabula_entropy.py"
