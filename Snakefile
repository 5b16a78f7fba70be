# storyflow's workflow, for `snakemake` run from the checkout: its one definition is
# workflow/Snakefile (the snakemake-workflows layout, where the workflow catalog looks). Paths in
# that file are relative to it (includes, the report) or to the working directory (the config).


include: "workflow/Snakefile"
