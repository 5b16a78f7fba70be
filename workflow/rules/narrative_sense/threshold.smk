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
        max_tokens=NARRATIVE_SENSE_SETTINGS["max_tokens"],
        min_tokens=NARRATIVE_SENSE_SETTINGS["min_tokens"],
        top_pairs=NARRATIVE_SENSE_SETTINGS["top_pairs"],
        random_story=NARRATIVE_SENSE_SETTINGS["random_story"],
        alpha=NARRATIVE_SENSE_SETTINGS["alpha"],
        seed=NARRATIVE_SENSE_SETTINGS["seed"],
        cross_fitted=narrative_sense_cross_fitted,
        folds=NARRATIVE_SENSE_SETTINGS["folds"],
        reference_max_tokens=NARRATIVE_SENSE_SETTINGS["reference_max_tokens"],
        min_stories=NARRATIVE_SENSE_SETTINGS["min_stories"],
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
