# Tension, stage 4: group means and contrasts, labelled with the checks' verdicts.


rule summarize_tension:
    input:
        stories=plan.corpus.STORIES,
        scores=tension_scores,
        pmi=tension_pmi,
        validity=TENSION_VALIDITY,
    output:
        groups=report(
            plan.tension.GROUP_MEANS,
            caption="../../report/tension_groups.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        effects=report(
            plan.tension.EFFECTS,
            caption="../../report/tension_effects.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        likelihood=plan.tension.LIKELIHOOD_VS_SAMPLED,
        measures=plan.tension.STORY_MEASURES,
    log:
        plan.tension.OUT.log("summarize_tension"),
    wildcard_constraints:
        corpus=one_of(TENSION_MODELS["corpora"]),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=tension_summary_settings,
    script:
        "../../../scripts/summarize_tension.py"
