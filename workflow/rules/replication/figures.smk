# Replication: one figure per paper.


rule plot_replication:
    input:
        table=plan.replication.TABLE,
    output:
        png=report(
            plan.replication.FIGURE.png,
            caption="../../report/replication_figure.rst",
            category="Replication",
            subcategory="{paper}",
        ),
        pdf=plan.replication.FIGURE.pdf,
    log:
        plan.replication.OUT.shared_log("plot_replication", "paper"),
    wildcard_constraints:
        paper=one_of(REPLICATION_PAPERS),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        dpi=FIGURES["dpi"],
    script:
        "../../../scripts/plot_replication.py"
