# Every measure on the same stories (docs/comparison.md): one story table per corpus built from
# the measures' story_measures tables, correlations between the measures, group separation.


include: "comparison/common.smk"


rule build_story_table:
    input:
        stories=CORPUS_OUT("stories.parquet"),
        sentences=CORPUS_OUT("sentences.parquet"),
        measures=story_measure_files,
        validity=VALIDITY_TABLE,
    output:
        table=COMPARISON_OUT("measures.parquet"),
        verdicts=report(
            COMPARISON_OUT.table("measure_verdicts.csv"),
            caption="../report/measure_verdicts.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
        units=report(
            COMPARISON_OUT.table("measure_units.csv"),
            caption="../report/measure_units.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/build_story_table.log",
    wildcard_constraints:
        corpus=one_of(COMPARED),
    conda:
        "../../envs/storyflow.yaml"
    script:
        "../../scripts/build_story_table.py"


rule correlate_measures:
    input:
        table=COMPARISON_OUT("measures.parquet"),
        verdicts=COMPARISON_OUT.table("measure_verdicts.csv"),
    output:
        table=report(
            COMPARISON_OUT.table("measure_correlations.csv"),
            caption="../report/measure_correlations_table.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/correlate_measures.log",
    wildcard_constraints:
        corpus=one_of(COMPARED),
    conda:
        "../../envs/storyflow.yaml"
    params:
        length=COMPARISON["length"],
        bootstrap=COMPARISON_BOOTSTRAP,
    script:
        "../../scripts/correlate_measures.py"


rule compute_model_agreement:
    input:
        measures=story_measure_files,
        verdicts=COMPARISON_OUT.table("measure_verdicts.csv"),
    output:
        table=report(
            COMPARISON_OUT.table("model_agreement.csv"),
            caption="../report/model_agreement.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/compute_model_agreement.log",
    wildcard_constraints:
        corpus=one_of(COMPARED),
    conda:
        "../../envs/storyflow.yaml"
    params:
        bootstrap=COMPARISON_BOOTSTRAP,
    script:
        "../../scripts/compute_model_agreement.py"


rule compute_measure_separation:
    input:
        table=COMPARISON_OUT("measures.parquet"),
        units=COMPARISON_OUT.table("measure_units.csv"),
        verdicts=COMPARISON_OUT.table("measure_verdicts.csv"),
    output:
        table=report(
            COMPARISON_OUT.table("measure_separation.csv"),
            caption="../report/measure_separation_table.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/compute_measure_separation.log",
    wildcard_constraints:
        corpus=one_of(COMPARED),
    conda:
        "../../envs/storyflow.yaml"
    params:
        contrasts=comparison_contrasts,
        confidence=config["stats"]["confidence"],
        min_group_size=config["validity"]["min_group_size"],
    script:
        "../../scripts/compute_measure_separation.py"


rule plot_measure_correlations:
    input:
        table=COMPARISON_OUT.table("measure_correlations.csv"),
    output:
        png=report(
            COMPARISON_OUT.figure("measure_correlations.png"),
            caption="../report/measure_correlations_figure.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
        pdf=COMPARISON_OUT.figure("measure_correlations.pdf"),
    log:
        "logs/{corpus}/plot_measure_correlations.log",
    wildcard_constraints:
        corpus=one_of(COMPARED),
    conda:
        "../../envs/storyflow.yaml"
    params:
        length=COMPARISON["length"],
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_measure_correlations.py"


rule plot_measure_separation:
    input:
        table=COMPARISON_OUT.table("measure_separation.csv"),
    output:
        png=report(
            COMPARISON_OUT.figure("measure_separation.png"),
            caption="../report/measure_separation_figure.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
        pdf=COMPARISON_OUT.figure("measure_separation.pdf"),
    log:
        "logs/{corpus}/plot_measure_separation.log",
    wildcard_constraints:
        corpus=one_of(COMPARED),
    conda:
        "../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_measure_separation.py"
