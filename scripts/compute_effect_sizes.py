"""Rule compute_effect_sizes: Welch's t-test and Hedges' g for each contrast of story groups."""

from storyflow import stats, tables
from storyflow.runner import run


def main(smk):
    effects = stats.contrast_effects(
        stats.read_story_tables(smk.input["stories"]),
        list(smk.params["contrasts"]),
        confidence=float(smk.params["confidence"]),
        min_sentences=int(smk.params["min_sentences"]),
        labels=tables.read(tables.STORIES, smk.input["labels"], needs=["story_id"]),
        min_group_size=int(smk.params["min_group_size"]),
    )
    effects.to_csv(smk.output["table"], index=False)
    stats.contrast_summary(effects).to_csv(smk.output["summary"], index=False)


run(main, snakemake)
