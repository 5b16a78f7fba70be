"""Rule score_narrative_sense: pair scores per story and the narrative-sense threshold."""

import logging

from storyflow import tables
from storyflow.measures.narrative_sense import pmi as narrative_sense
from storyflow.runner import run, save


def main(smk):
    log = logging.getLogger("storyflow.score_narrative_sense")
    table = narrative_sense.PairTable.load(smk.input.pairs, smk.input.vocabulary)
    lemmas = narrative_sense.truncate(
        tables.read(tables.LEMMAS, smk.input.lemmas), smk.params.max_tokens
    )
    scores = narrative_sense.score_stories(lemmas, table, smk.params.top_pairs)
    tested = narrative_sense.narrative_sense_threshold(
        scores, table, alpha=smk.params.alpha, seed=int(smk.params.seed)
    )
    summary = narrative_sense.group_table(tested)
    save(smk.output, scores=tested, table=summary)
    for row in summary.itertuples(index=False):
        log.info(
            "%s: %d/%d stories above the threshold (%.3f), median PMI %.3f, top %.3f",
            row.group,
            row.n_exceeding,
            row.n_tested,
            row.share_exceeding,
            row.median_pmi,
            row.median_pmi_top,
        )


run(main, snakemake)
