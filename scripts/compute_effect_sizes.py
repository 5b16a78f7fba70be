"""Rule compute_effect_sizes: Welch's t-test and Hedges' g for each contrast of story groups."""

import pandas as pd

from storyflow import stats
from storyflow.runner import run


def main(smk):
    story = stats.read_story_tables(smk.input["stories"])
    labels = pd.read_parquet(smk.input["labels"])
    labels = labels.drop(columns=[c for c in ("text", "topic") if c in labels])
    effects = stats.contrast_effects(
        story,
        list(smk.params["contrasts"]),
        confidence=float(smk.params["confidence"]),
        min_sentences=int(smk.params["min_sentences"]),
        labels=labels,
        min_group_size=int(smk.params["min_group_size"]),
    )
    effects.to_csv(smk.output["table"], index=False)
    stats.contrast_summary(effects).to_csv(smk.output["summary"], index=False)


run(main, snakemake)
