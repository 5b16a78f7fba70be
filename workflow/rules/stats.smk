rule summarize_sequentiality:
    input:
        stories=story_tables,
    output:
        table=report(
            "results/{corpus}/tables/sequentiality_by_type.csv",
            caption="../report/sequentiality_by_type.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/summarize_sequentiality.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        confidence=config["stats"]["confidence"],
        min_sentences=config["stats"]["min_sentences"],
    script:
        "../../scripts/summarize_sequentiality.py"


rule compute_effect_sizes:
    input:
        stories=story_tables,
        labels="results/{corpus}/stories.parquet",
    output:
        table=report(
            "results/{corpus}/tables/effect_sizes.csv",
            caption="../report/effect_sizes_table.rst",
            category="Effect sizes",
            subcategory="{corpus}",
        ),
        summary=report(
            "results/{corpus}/tables/contrast_summary.csv",
            caption="../report/contrast_summary.rst",
            category="Effect sizes",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/compute_effect_sizes.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        contrasts=corpus_contrasts,
        confidence=config["stats"]["confidence"],
        min_sentences=config["stats"]["min_sentences"],
        min_group_size=config["validity"]["min_group_size"],
    script:
        "../../scripts/compute_effect_sizes.py"
