# The answer to each corpus's contrasts: its headline, then every contrast x formulation x
# histories x design x model (and the mean over the models), read from its interval against 0
# and the equivalence band (storyflow.contrast_answers.answers); its forest plot, and both as one
# page of the report's category "Contrasts" (storyflow.contrast_answers.page).


rule answer_contrasts:
    input:
        stories=every_model(plan.sequentiality.STORY_SCORES),
        labels=plan.corpus.STORIES,
        nll_cost=every_model(plan.sequentiality.NLL_COST),
        separation=contrast_separation,
    output:
        table=plan.contrast_answers.TABLE,
    log:
        plan.sequentiality.OUT.log("answer_contrasts"),
    wildcard_constraints:
        corpus=one_of(ANSWERED_CORPORA),
    conda:
        # the adjusted contrasts are fitted with lme4 in R, as the regressions are
        "../../../envs/regression.yaml"
    params:
        settings=contrast_answer_settings,
    script:
        "../../../scripts/answer_contrasts.py"


rule plot_contrast_answers:
    input:
        table=plan.contrast_answers.TABLE,
    output:
        png=report(
            plan.contrast_answers.FIGURE.png,
            caption="../../report/contrast_answers_figure.rst",
            category="Contrasts",
            subcategory="{corpus}",
        ),
        pdf=plan.contrast_answers.FIGURE.pdf,
    log:
        plan.sequentiality.OUT.log("plot_contrast_answers"),
    wildcard_constraints:
        corpus=one_of(ANSWERED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=FIGURES["dpi"],
    script:
        "../../../scripts/plot_contrast_answers.py"


rule write_contrast_page:
    input:
        table=plan.contrast_answers.TABLE,
        png=plan.contrast_answers.FIGURE.png,
    output:
        page=report(
            plan.contrast_answers.PAGE,
            caption="../../report/contrast_answers_table.rst",
            category="Contrasts",
            subcategory="{corpus}",
        ),
    log:
        plan.sequentiality.OUT.log("write_contrast_page"),
    wildcard_constraints:
        corpus=one_of(ANSWERED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/write_contrast_page.py"


rule write_contrast_methods:
    input:
        table=plan.contrast_answers.TABLE,
        provenance=plan.models.PROVENANCE,
    output:
        methods=plan.contrast_answers.METHODS,
    log:
        plan.sequentiality.OUT.log("write_contrast_methods"),
    wildcard_constraints:
        corpus=one_of(ANSWERED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=contrast_answer_settings,
    script:
        "../../../scripts/write_contrast_methods.py"
