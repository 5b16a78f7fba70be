"""Rule score_narrative_sense: pair scores per story, the short-set filter and the threshold."""

import logging

from storyflow import tables
from storyflow.measures.narrative_sense import length_filter, threshold
from storyflow.runner import run, save


def main(smk):
    log = logging.getLogger("storyflow.score_narrative_sense")
    p = smk.params
    lemmas = tables.read(tables.LEMMAS, smk.input.lemmas)
    excluded = length_filter.short_sets(lemmas, p.min_tokens)
    tested = threshold.assess_corpus(
        lemmas,
        excluded,
        cross_fitted=p.cross_fitted,
        pairs=smk.input.get("pairs"),
        vocabulary=smk.input.get("vocabulary"),
        references=list(smk.input.get("reference", [])),
        max_tokens=p.max_tokens,
        folds=p.folds,
        reference_max_tokens=p.reference_max_tokens,
        min_stories=p.min_stories,
        top_pairs=p.top_pairs,
        weighting=p.random_story,
        alpha=p.alpha,
        seed=p.seed,
    )
    summary = threshold.group_table(tested)
    save(smk.output, scores=tested, table=summary, excluded=excluded)
    log.info(
        "%d stories left out by the short-set filter (min_tokens %s): %s",
        len(excluded),
        p.min_tokens,
        smk.output.excluded,
    )
    for row in summary.itertuples(index=False):
        log.info(
            "%s: %d/%d stories above the threshold (%.3f; %d left out), median PMI %.3f, top %.3f",
            row.group,
            row.n_exceeding,
            row.n_tested,
            row.share_exceeding,
            row.n_excluded,
            row.median_pmi,
            row.median_pmi_top,
        )


run(main, snakemake)
