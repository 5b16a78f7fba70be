"""Rule fit_regressions: lme4/lmerTest mixed-effects models of sequentiality (docs/method.md §7)."""

from storyflow.measures.sequentiality.regression import fit_corpus
from storyflow.runner import run


def main(smk):
    coefficients, diagnostics, per_spec = fit_corpus(
        smk.input["sequentiality"],
        smk.input["covariates"],
        # the narrative-sense story scores, when that stage runs on this corpus
        smk.input.get("story_scores"),
        specs=smk.params["specs"],
        models=smk.params["models"],
        formulation=smk.params["formulation"],
        fdr_alpha=smk.params["fdr_alpha"],
        confidence=smk.params["confidence"],
        skipped=smk.params["skipped"],
    )
    coefficients.to_csv(smk.output["coefficients"], index=False)
    diagnostics.to_csv(smk.output["diagnostics"], index=False)
    for path, table in zip(smk.output["tables"], per_spec, strict=True):
        table.to_csv(path, index=False)


run(main, snakemake)
