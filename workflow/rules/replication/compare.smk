# Each paper's published results beside ours (docs/replication.md).


rule compare_with_paper:
    input:
        unpack(replication_inputs),
    output:
        table=report(
            plan.replication.table("{paper}"),
            caption="../../report/replication_table.rst",
            category="Replication",
            subcategory="{paper}",
        ),
    log:
        "logs/replication/compare_with_paper/{paper}.log",
    wildcard_constraints:
        paper=one_of(REPLICATION_PAPERS),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=replication_settings,
    script:
        "../../../scripts/compare_with_paper.py"


rule plot_replication:
    input:
        table=plan.replication.table("{paper}"),
    output:
        png=report(
            plan.replication.figure("{paper}"),
            caption="../../report/replication_figure.rst",
            category="Replication",
            subcategory="{paper}",
        ),
        pdf=plan.replication.figure("{paper}", "pdf"),
    log:
        "logs/replication/plot_replication/{paper}.log",
    wildcard_constraints:
        paper=one_of(REPLICATION_PAPERS),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
    script:
        "../../../scripts/plot_replication.py"
