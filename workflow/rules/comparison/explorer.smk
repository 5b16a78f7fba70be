# Comparison: the story explorer, one self-contained HTML page per corpus (docs/explorer.md).


rule build_story_explorer:
    input:
        stories=plan.corpus.STORIES,
        sentences=plan.corpus.SENTENCES,
        table=plan.comparison.STORIES,
        units=plan.comparison.MEASURE_UNITS,
        verdicts=plan.comparison.MEASURE_VERDICTS,
        validity=VALIDITY_TABLE,
        sentence_scores=explorer_files("sentence_scores"),
        tension_curves=explorer_files("tension_curves"),
        fabula_versions=explorer_files("fabula_versions"),
        fabula_questions=explorer_files("fabula_questions"),
        fabula_answers=explorer_files("fabula_answers"),
        plot_hole_stories=explorer_files("plot_hole_stories"),
        plot_hole_answers=explorer_files("plot_hole_answers"),
    output:
        page=report(
            plan.comparison.EXPLORER,
            caption="../../report/story_explorer.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        plan.comparison.OUT.log("build_story_explorer"),
    wildcard_constraints:
        corpus=one_of(COMPARED_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/build_story_explorer.py"
