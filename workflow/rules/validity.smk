# Validity (docs/validity.md): every measure's checks of the models behind its results, gathered
# into one table; the report's first page puts it into words.


rule gather_validity:
    input:
        checks=VALIDITY_FILES,
        effects=expand("results/{corpus}/tables/effect_sizes.csv", corpus=CORPORA),
    output:
        table=report(
            "results/validity.csv",
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
