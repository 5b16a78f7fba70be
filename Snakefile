# storyflow: narrative measures of stories with language models (docs/method.md): sequentiality
# (Sap et al. 2022 and its replication), narrative sense (PMI), tension (ending forecasts), Fabula
# Entropy Indexing and plot holes, and their comparison on the same stories.
# This file is a table of contents. The rules live in workflow/rules/, one folder per stage or
# measure (the corpora, the models' weights, each measure of storyflow.plan.registry, then the
# comparison, validity, cost and replication): its common.smk holds its lookups, each other file
# one stage's rules (docs/adding_a_measure.md).


from storyflow.config_files import exit_on_yaml_problem

# Snakemake names neither the file nor the line of a YAML mistake: say both first.
exit_on_yaml_problem("config/config.yaml")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"


for rules_file in rule_files():

    include: rules_file


rule all:
    default_target: True
    input:
        final_outputs(),
