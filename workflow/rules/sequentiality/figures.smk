from storyflow.corpora import group_word as corpus_group_word


rule plot_sequentiality:
    input:
        table=plan.sequentiality.BY_TYPE,
    output:
        png=report(
            plan.sequentiality.BY_HISTORY_FIGURE.png,
            caption="../../report/sequentiality_by_history.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        pdf=plan.sequentiality.BY_HISTORY_FIGURE.pdf,
    log:
        plan.sequentiality.OUT.log("plot_sequentiality"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        figures=FIGURES,
        group_word=lambda wildcards: corpus_group_word(config, wildcards.corpus),
    script:
        "../../../scripts/plot_sequentiality.py"


rule plot_effect_sizes:
    input:
        table=plan.sequentiality.EFFECT_SIZES,
    output:
        png=report(
            plan.sequentiality.EFFECT_SIZES_FIGURE.png,
            caption="../../report/effect_sizes_figure.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        pdf=plan.sequentiality.EFFECT_SIZES_FIGURE.pdf,
    log:
        plan.sequentiality.OUT.log("plot_effect_sizes"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        figures=FIGURES,
    script:
        "../../../scripts/plot_effect_sizes.py"


rule plot_contrast_sequentiality:
    input:
        table=plan.sequentiality.EFFECT_SIZES,
    output:
        png=report(
            plan.sequentiality.BY_CONTRAST_FIGURE.png,
            caption="../../report/sequentiality_by_contrast.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        pdf=plan.sequentiality.BY_CONTRAST_FIGURE.pdf,
    log:
        plan.sequentiality.OUT.log("plot_contrast_sequentiality"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        confidence=STATISTICS["confidence"],
        figures=FIGURES,
    script:
        "../../../scripts/plot_contrast_sequentiality.py"
