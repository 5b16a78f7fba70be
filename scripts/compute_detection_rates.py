"""Rule compute_detection_rates: detection rates on human vs LLM stories (paired), with
each detector's validity verdict."""

import logging

from storyflow import tables
from storyflow.measures.plot_holes.scoring import best_detector, human_vs_llm
from storyflow.measures.plot_holes.verdict import verdict_of
from storyflow.runner import run


def main(smk):
    p = smk.params
    check = tables.read(tables.VALIDITY, smk.input.validity)
    best = best_detector(check)
    logging.getLogger("storyflow").info("best valid detector: %s", best)
    rates = human_vs_llm(
        tables.read(tables.PLOT_HOLE_ANSWERS, smk.input.answers),
        tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "story_type"]),
        human=p.human,
        confidence=float(p.confidence),
        resamples=int(p.resamples),
        seed=int(p.seed),
        min_group_size=int(p.min_group_size),
        verdicts=verdict_of(check),
        best=best,
    )
    rates.to_csv(smk.output.rates, index=False)


run(main, snakemake)
