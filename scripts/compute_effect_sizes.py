"""Rule compute_effect_sizes: Welch's t-test and Hedges' g for each story-type contrast."""

from storyflow import stats
from storyflow.runner import run


def main(smk):
    story = stats.read_story_tables(smk.input["stories"])
    effects = stats.contrast_effects(
        story,
        list(smk.params["contrasts"]),
        confidence=float(smk.params["confidence"]),
        min_sentences=int(smk.params["min_sentences"]),
    )
    effects.to_csv(smk.output["table"], index=False)


run(main, snakemake)
