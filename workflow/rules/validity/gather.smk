# Validity (docs/validity.md): every measure's checks of the models behind its results, gathered
# into one table; the report's first page puts it into words.


rule gather_validity:
    input:
        checks=VALIDITY_FILES,
        effects=plan.validity.effect_tables(config),
    output:
        table=report(
            VALIDITY_TABLE,
            caption="../../report/validity.rst",
            category="Validity",
        ),
    log:
        plan.validity.OUT.shared_log("gather_validity"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        effect_corpora=CORPORA,
        min_group_size=STATISTICS["min_group_size"],
    script:
        "../../../scripts/gather_validity.py"
