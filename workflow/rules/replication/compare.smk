# Replication: each paper's published results beside ours (docs/replication.md).


rule compare_with_paper:
    input:
        unpack(replication_inputs),
    output:
        table=report(
            plan.replication.TABLE,
            caption="../../report/replication_table.rst",
            category="Replication",
            subcategory="{paper}",
        ),
    log:
        plan.replication.OUT.shared_log("compare_with_paper", "paper"),
    wildcard_constraints:
        paper=one_of(REPLICATION_PAPERS),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=replication_settings,
    script:
        "../../../scripts/compare_with_paper.py"
