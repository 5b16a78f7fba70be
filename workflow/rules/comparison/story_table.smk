# Comparison of the measures, stage 1: one story table per corpus from the measures' story
# measures (docs/comparison.md).


rule build_story_table:
    input:
        stories=plan.corpus.STORIES,
        sentences=plan.corpus.SENTENCES,
        measures=story_measure_files,
        validity=VALIDITY_TABLE,
    output:
        table=plan.comparison.STORIES,
        verdicts=report(
            plan.comparison.MEASURE_VERDICTS,
            caption="../../report/measure_verdicts.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
        units=report(
            plan.comparison.MEASURE_UNITS,
            caption="../../report/measure_units.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        plan.comparison.OUT.log("build_story_table"),
    wildcard_constraints:
        corpus=one_of(COMPARED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/build_story_table.py"


rule export_story_table:
    input:
        table=plan.comparison.STORIES,
    output:
        table=report(
            plan.comparison.STORIES_CSV,
            caption="../../report/story_table.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        plan.comparison.OUT.log("export_story_table"),
    wildcard_constraints:
        corpus=one_of(COMPARED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        tables={"table": "STORY_TABLE"},
    script:
        "../../../scripts/export_csv.py"
