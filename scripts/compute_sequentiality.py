"""Rule compute_sequentiality: sentence- and story-level sequentiality of one model's NLL table."""

import pandas as pd

from storyflow.measures.sequentiality import scores as sequentiality
from storyflow.runner import run


def main(smk):
    nll = pd.read_parquet(smk.input["nll"])
    stories = pd.read_parquet(smk.input["stories"], columns=["story_id", "story_type"])
    counts = pd.read_csv(smk.input["counts"], dtype={"story_id": str, "story_type": str})
    sentences = sequentiality.sentence_sequentiality(nll)
    story = sequentiality.story_sequentiality(sentences, stories, counts)
    sentences.to_parquet(smk.output["sentences"], index=False)
    story.to_parquet(smk.output["stories"], index=False)


run(main, snakemake)
