"""Rule score_narrative_sense: pair scores per story, the short-set filter and the threshold."""

import logging

from storyflow import tables
from storyflow.measures.narrative_sense import length_filter, threshold
from storyflow.runner import run, save


def main(smk):
    log = logging.getLogger("storyflow.score_narrative_sense")
    settings = threshold.ScoreSettings.from_params(smk.params.settings)
    lemmas = tables.read(tables.LEMMAS, smk.input.lemmas)
    excluded = length_filter.short_sets(lemmas, settings.min_tokens)
    tested = threshold.assess_corpus(
        lemmas,
        excluded,
        settings,
        pairs=smk.input.get("pairs"),
        vocabulary=smk.input.get("vocabulary"),
        references=list(smk.input.get("reference", [])),
    )
    summary = threshold.group_table(tested)
    save(smk.output, scores=tested, table=summary, excluded=excluded)
    log.info(
        "%d stories left out by the short-set filter (min_tokens %s): %s",
        len(excluded),
        settings.min_tokens,
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
