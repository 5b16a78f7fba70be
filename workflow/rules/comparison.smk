# Every measure on the same stories (docs/comparison.md): one story table per corpus built from
# the measures' story_measures tables, correlations between the measures, group separation.


rule build_story_table:
    input:
        stories="results/{corpus}/stories.parquet",
        sentences="results/{corpus}/sentences.parquet",
        measures=story_measure_files,
        validity="results/validity.csv",
    output:
        table="results/{corpus}/measures.parquet",
        verdicts=report(
            "results/{corpus}/tables/measure_verdicts.csv",
            caption="../report/measure_verdicts.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
        units=report(
            "results/{corpus}/tables/measure_units.csv",
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
        table="results/{corpus}/measures.parquet",
        verdicts="results/{corpus}/tables/measure_verdicts.csv",
    output:
        table=report(
            "results/{corpus}/tables/measure_correlations.csv",
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
        bootstrap=COMPARISON["bootstrap"],
        seed=COMPARISON["seed"],
        confidence=config["stats"]["confidence"],
    script:
        "../../scripts/correlate_measures.py"


rule compare_models:
    input:
        measures=story_measure_files,
        verdicts="results/{corpus}/tables/measure_verdicts.csv",
    output:
        table=report(
            "results/{corpus}/tables/model_agreement.csv",
            caption="../report/model_agreement.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/compare_models.log",
    wildcard_constraints:
        corpus=one_of(COMPARED),
    conda:
        "../../envs/storyflow.yaml"
    params:
        bootstrap=COMPARISON["bootstrap"],
        seed=COMPARISON["seed"],
        confidence=config["stats"]["confidence"],
    script:
        "../../scripts/compare_models.py"


rule compare_groups:
    input:
        table="results/{corpus}/measures.parquet",
        units="results/{corpus}/tables/measure_units.csv",
        verdicts="results/{corpus}/tables/measure_verdicts.csv",
    output:
        table=report(
            "results/{corpus}/tables/measure_separation.csv",
            caption="../report/measure_separation_table.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/compare_groups.log",
    wildcard_constraints:
        corpus=one_of(COMPARED),
    conda:
        "../../envs/storyflow.yaml"
    params:
        contrasts=comparison_contrasts,
        confidence=config["stats"]["confidence"],
        min_group_size=config["validity"]["min_group_size"],
    script:
        "../../scripts/compare_groups.py"


rule plot_measure_correlations:
    input:
        table="results/{corpus}/tables/measure_correlations.csv",
    output:
        png=report(
            "results/{corpus}/figures/measure_correlations.png",
            caption="../report/measure_correlations_figure.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
        pdf="results/{corpus}/figures/measure_correlations.pdf",
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


rule plot_group_separation:
    input:
        table="results/{corpus}/tables/measure_separation.csv",
    output:
        png=report(
            "results/{corpus}/figures/measure_separation.png",
            caption="../report/measure_separation_figure.rst",
            category="Comparison of measures",
            subcategory="{corpus}",
        ),
        pdf="results/{corpus}/figures/measure_separation.pdf",
    log:
        "logs/{corpus}/plot_group_separation.log",
    wildcard_constraints:
        corpus=one_of(COMPARED),
    conda:
        "../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_group_separation.py"
