# Fabula entropy: the config lookups and input functions of its rules (the other files of
# workflow/rules/fabula_entropy/), kept apart from the rules as Snakemake's linter asks; file
# names, readers and settings come from storyflow.plan.fabula_entropy.
FABULA_ENTROPY_CORPORA = exit_on_config_error(
    plan.fabula_entropy.corpora, config
)  # [] when the stage is off
FABULA_ENTROPY_READERS = exit_on_config_error(plan.fabula_entropy.readers, config)
FABULA_ENTROPY_INDEX = exit_on_config_error(
    plan.fabula_entropy.index, config
)  # headline, samples
FABULA_ENTROPY_READING = plan.fabula_entropy.reading(config)
FABULA_ENTROPY_STATISTICS = plan.fabula_entropy.statistics(config)
FABULA_ENTROPY_READER_THRESHOLDS = plan.fabula_entropy.reader_thresholds(config)


def fabula_entropy_items(wildcards):
    return plan.fabula_entropy.items(config, wildcards.corpus)


def fabula_entropy_answers(wildcards):
    return expand(
        plan.fabula_entropy.ANSWERS,
        corpus=wildcards.corpus,
        model=FABULA_ENTROPY_READERS,
    )


def fabula_entropy_kinds(wildcards):
    return plan.fabula_entropy.items(config, wildcards.corpus)["kinds"]


def fabula_entropy_human_answers(wildcards):
    """The corpus's human-answer CSV (fabula_entropy.human_answers), if one is configured."""
    return plan.fabula_entropy.human_answers(config, wildcards.corpus)


def fabula_entropy_lexicon():
    """The antonym lexicon packaged with the storyflow library (storyflow/data/antonyms.tsv)."""
    return plan.fabula_entropy.packaged_lexicon()
