# storyflow's workflow, for `snakemake` run from the checkout: its one definition is
# workflow/Snakefile (the snakemake-workflows layout, where the workflow catalog looks). Paths in
# that file are relative to it (includes, the report) or to the working directory (the config).
# Included as the `include:` keyword does, but keeping the included file's default target (rule
# all): the keyword gives the including file's back, here none, and a plain `snakemake` would
# have nothing to do.

workflow.include("workflow/Snakefile", overwrite_default_target=True)
