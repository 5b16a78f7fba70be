# storyflow: narrative measures of stories with language models (docs/method.md): sequentiality
# (Sap et al. 2022 and its replication), narrative sense (PMI), tension (ending forecasts), Fabula
# Entropy Indexing and plot holes, and their comparison on the same stories.
# This file is a table of contents; the rules live in workflow/rules/, one file per stage or
# measure, its lookups beside it in workflow/rules/<measure>/common.smk
# (docs/adding_a_measure.md).


from storyflow.config_files import exit_on_yaml_problem

# Snakemake names neither the file nor the line of a YAML mistake: say both first.
exit_on_yaml_problem("config/config.yaml")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/corpus.smk"
include: "workflow/rules/books.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/sequentiality.smk"
include: "workflow/rules/narrative_sense.smk"
include: "workflow/rules/tension.smk"
include: "workflow/rules/fabula_entropy.smk"
include: "workflow/rules/plot_holes.smk"
include: "workflow/rules/comparison.smk"
include: "workflow/rules/validity.smk"
include: "workflow/rules/cost.smk"
include: "workflow/rules/replication/common.smk"
include: "workflow/rules/replication/compare.smk"


rule all:
    default_target: True
    input:
        final_outputs(),
