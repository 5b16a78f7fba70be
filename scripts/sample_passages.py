"""Rule sample_passages: prose passages of the sampled books, split into sentences, with POV."""

from storyflow.corpora.books import PassageSampleSettings, sample_book_passages
from storyflow.runner import run, save_fields


def main(smk):
    p = smk.params
    passages = sample_book_passages(
        smk.input.manifest,
        list(smk.input.books),
        list(p.ids),
        PassageSampleSettings.from_params(p.settings),
        p.spacy_model,
    )
    save_fields(smk.output, passages)


run(main, snakemake)
