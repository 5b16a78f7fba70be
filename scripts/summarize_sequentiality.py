"""Rule summarize_sequentiality: mean and CI of story-level sequentiality per group."""

from storyflow import stats, tables
from storyflow.runner import run


def main(smk):
    story = stats.read_story_tables(smk.input["stories"])
    summary = stats.summarize(
        story,
        confidence=float(smk.params["confidence"]),
        min_sentences=int(smk.params["min_sentences"]),
    )
    tables.labelled(summary, smk.params["label"]).to_csv(smk.output["table"], index=False)


run(main, snakemake)
