"""Rule compute_sequentiality: sentence- and story-level sequentiality of one model's NLL table."""

from storyflow import tables
from storyflow.measures.sequentiality import scores as sequentiality
from storyflow.runner import run


def main(smk):
    nll = tables.read(tables.NLL, smk.input["nll"])
    stories = tables.read(tables.STORIES, smk.input["stories"], needs=["story_id", "story_type"])
    counts = tables.read(tables.SENTENCE_COUNTS, smk.input["counts"])
    sentences = sequentiality.sentence_sequentiality(nll)
    story = sequentiality.story_sequentiality(sentences, stories, counts)
    sentences.to_parquet(smk.output["sentences"], index=False)
    story.to_parquet(smk.output["stories"], index=False)


run(main, snakemake)
