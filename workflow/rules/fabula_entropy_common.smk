# Fabula entropy: the stage's config lookups and input functions (its rules: fabula_entropy.smk,
# which includes this file; kept apart so that a rule file holds rules only).

FEI = config["fabula_entropy"]
FEI_CORPORA = checked(plan.fabula_entropy_corpora, config) if FEI["enabled"] else []
FEI_READERS = checked(plan.fabula_entropy_readers, config) if FEI["enabled"] else []


def fei_items(wildcards):
    return plan.fabula_entropy_items(config, wildcards.corpus)


def fei_answers(wildcards):
    return expand(
        "results/{corpus}/fabula_entropy/answers/{model}.parquet",
        corpus=wildcards.corpus,
        model=FEI_READERS,
    )


def fei_kinds(wildcards):
    return plan.fabula_entropy_items(config, wildcards.corpus)["kinds"]


def fei_human_answers(wildcards):
    """The corpus's human-answer CSV (fabula_entropy.human_answers), if one is configured."""
    path = FEI["human_answers"].get(wildcards.corpus)
    return [path] if path else []


def fei_statistics():
    """What the stage's intervals and tests depend on (stats.confidence and validity's
    bootstrap, seed and min_group_size)."""
    keys = ("bootstrap", "seed", "min_group_size")
    return {"confidence": config["stats"]["confidence"]} | {
        k: config["validity"][k] for k in keys
    }


def fei_lexicon():
    return str(Path(workflow.basedir) / "src/storyflow/data/antonyms.tsv")


def fabula_entropy_outputs():
    """The stage's final tables and figures (rule all), when it is enabled."""
    if not FEI["enabled"]:
        return []
    return expand(
        [
            "results/{corpus}/fabula_entropy/validity.csv",
            "results/{corpus}/fabula_entropy/comparison.csv",
            "results/{corpus}/fabula_entropy/story_measures.parquet",
            "results/{corpus}/fabula_entropy/figures/distributions.png",
            "results/{corpus}/fabula_entropy/figures/dose_response.png",
        ],
        corpus=FEI_CORPORA,
    )
