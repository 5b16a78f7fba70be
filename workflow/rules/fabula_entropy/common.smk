# Fabula entropy: the config lookups and input functions of its rules (workflow/rules/fabula_entropy.smk
# and the files it includes), kept apart from the rules as Snakemake's linter asks.
FABULA_ENTROPY_OUT = plan.fabula_entropy.OUT
FEI = config["fabula_entropy"]
FEI_CORPORA = checked(plan.fabula_entropy.corpora, config)  # [] when the stage is off
FEI_READERS = checked(plan.fabula_entropy.readers, config)
FEI_INDEX = checked(plan.fabula_entropy.index, config)  # headline, samples


def fei_items(wildcards):
    return plan.fabula_entropy.items(config, wildcards.corpus)


def fei_answers(wildcards):
    return expand(
        FABULA_ENTROPY_OUT("answers/{model}.parquet"),
        corpus=wildcards.corpus,
        model=FEI_READERS,
    )


def fei_kinds(wildcards):
    return plan.fabula_entropy.items(config, wildcards.corpus)["kinds"]


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
