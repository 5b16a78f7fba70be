rule plot_sequentiality:
    input:
        table=SEQUENTIALITY_OUT.table("sequentiality_by_type.csv"),
    output:
        png=report(
            SEQUENTIALITY_OUT.figure("sequentiality_by_history.png"),
            caption="../../report/sequentiality_by_history.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        pdf=SEQUENTIALITY_OUT.figure("sequentiality_by_history.pdf"),
    log:
        "logs/{corpus}/plot_sequentiality.log",
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
        width_per_panel=config["figures"]["width_per_panel"],
        height_per_panel=config["figures"]["height_per_panel"],
    script:
        "../../../scripts/plot_sequentiality.py"


rule plot_effect_sizes:
    input:
        table=SEQUENTIALITY_OUT.table("effect_sizes.csv"),
    output:
        png=report(
            SEQUENTIALITY_OUT.figure("effect_sizes.png"),
            caption="../../report/effect_sizes_figure.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        pdf=SEQUENTIALITY_OUT.figure("effect_sizes.pdf"),
    log:
        "logs/{corpus}/plot_effect_sizes.log",
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
        width_per_panel=config["figures"]["width_per_panel"],
        height_per_panel=config["figures"]["height_per_panel"],
    script:
        "../../../scripts/plot_effect_sizes.py"


rule plot_contrast_sequentiality:
    input:
        table=SEQUENTIALITY_OUT.table("effect_sizes.csv"),
    output:
        png=report(
            SEQUENTIALITY_OUT.figure("sequentiality_by_contrast.png"),
            caption="../../report/sequentiality_by_contrast.rst",
            category="Sequentiality",
            subcategory="{corpus}",
        ),
        pdf=SEQUENTIALITY_OUT.figure("sequentiality_by_contrast.pdf"),
    log:
        "logs/{corpus}/plot_contrast_sequentiality.log",
    conda:
        "../../../envs/storyflow.yaml"
    params:
        confidence=config["stats"]["confidence"],
        dpi=config["figures"]["dpi"],
        width_per_panel=config["figures"]["width_per_panel"],
        height_per_panel=config["figures"]["height_per_panel"],
    script:
        "../../../scripts/plot_contrast_sequentiality.py"
