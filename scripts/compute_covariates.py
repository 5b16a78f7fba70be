"""Rule compute_covariates: sentence-level coherence covariates of a corpus (docs/method.md §6)."""

from storyflow import tables
from storyflow.measures.sequentiality import covariates
from storyflow.runner import run


def main(smk):
    table = covariates.corpus_covariates(
        tables.read(tables.SENTENCES, smk.input["sentences"]),
        spacy_model=smk.params["spacy_model"],
        embedding_model=smk.params["embedding_model"],
        connectives=smk.input["connectives"],
        relation_classifier_name=smk.params["relation_classifier"],
        agent_resolver_name=smk.params["agent_resolver"],
        windows=[int(w) for w in smk.params["windows"]],
        zipf_threshold=float(smk.params["zipf_threshold"]),
        threads=int(smk.threads),
    )
    table.to_parquet(smk.output["covariates"], index=False)


run(main, snakemake)
