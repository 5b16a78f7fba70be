# Sequentiality (docs/sequentiality.md): how much more predictable each sentence becomes with
# the sentences before it. Its lookups are in sequentiality/common.smk; its stages, in order, in
# the other files of sequentiality/


include: "sequentiality/common.smk"
include: "sequentiality/nll.smk"
include: "sequentiality/scores.smk"
include: "sequentiality/stats.smk"
include: "sequentiality/figures.smk"
include: "sequentiality/covariates.smk"
include: "sequentiality/regression.smk"
