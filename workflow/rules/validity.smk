# Validity (docs/validity.md): every measure's checks of the models behind its results, gathered
# into one table; the report's first page puts it into words.
VALIDITY_FILES = checked(plan.validity.files, config)


rule gather_validity:
    input:
        checks=VALIDITY_FILES,
        effects=expand(SEQUENTIALITY_OUT.table("effect_sizes.csv"), corpus=CORPORA),
    output:
        table=report(
            VALIDITY_TABLE,
            caption="../report/validity.rst",
            category="Validity",
        ),
    log:
        "logs/gather_validity.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        effect_corpora=CORPORA,
        min_group_size=config["validity"]["min_group_size"],
    script:
        "../../scripts/gather_validity.py"
