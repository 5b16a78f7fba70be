# Narrative sense, stage 3: each target story's pair scores against its random story's (the threshold),
# and its story measures for the comparison.


rule score_narrative_sense:
    input:
        unpack(narrative_sense_score_inputs),
    output:
        scores=plan.narrative_sense.STORY_SCORES,
        table=report(
            plan.narrative_sense.GROUPS,
            caption="../../report/narrative_sense_table.rst",
            category="Narrative sense",
            subcategory="{corpus}",
        ),
        excluded=plan.narrative_sense.EXCLUDED_STORIES,
    log:
        plan.narrative_sense.OUT.log("score_narrative_sense"),
    wildcard_constraints:
        corpus=one_of(NARRATIVE_SENSE_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=narrative_sense_score_settings,
    script:
        "../../../scripts/score_narrative_sense.py"


rule collect_narrative_sense_measures:
    input:
        scores=plan.narrative_sense.STORY_SCORES,
    output:
        measures=plan.narrative_sense.STORY_MEASURES,
    log:
        plan.narrative_sense.OUT.log("collect_narrative_sense_measures"),
    wildcard_constraints:
        corpus=one_of(NARRATIVE_SENSE_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/collect_narrative_sense_measures.py"
