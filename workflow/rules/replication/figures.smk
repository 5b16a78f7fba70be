# Replication: one figure per paper, and its page in the report (the table in words, the figure).


rule plot_replication:
    input:
        table=plan.replication.TABLE,
    output:
        png=plan.replication.FIGURE.png,
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


rule write_replication_page:
    input:
        table=plan.replication.TABLE,
        figure=plan.replication.FIGURE.png,
    output:
        page=report(
            plan.replication.PAGE,
            caption="../../report/replication_page.rst",
            category="Replication",
            subcategory="{paper}",
        ),
    log:
        plan.replication.OUT.shared_log("write_replication_page", "paper"),
    wildcard_constraints:
        paper=one_of(REPLICATION_PAPERS),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        title=replication_title,
        measure=replication_measure,
        confidence=STATISTICS["confidence"],
        rates=plan.replication.rates(config),
    script:
        "../../../scripts/write_replication_page.py"
