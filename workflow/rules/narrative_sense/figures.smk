# Narrative sense: the pair-score figure.


rule plot_pair_scores:
    input:
        scores=plan.narrative_sense.STORY_SCORES,
    output:
        png=report(
            plan.narrative_sense.PAIR_SCORES_FIGURE.png,
            caption="../../report/pair_scores_figure.rst",
            category="Narrative sense",
            subcategory="{corpus}",
        ),
        pdf=plan.narrative_sense.PAIR_SCORES_FIGURE.pdf,
    log:
        plan.narrative_sense.OUT.log("plot_pair_scores"),
    wildcard_constraints:
        corpus=one_of(NARRATIVE_SENSE_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        top_pairs=NARRATIVE_SENSE_SETTINGS["top_pairs"],
        seed=NARRATIVE_SENSE_SETTINGS["seed"],
        dpi=FIGURES["dpi"],
    script:
        "../../../scripts/plot_pair_scores.py"
