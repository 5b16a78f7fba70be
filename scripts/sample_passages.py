"""Rule sample_passages: prose passages of the sampled books, split into sentences, with POV."""

from storyflow.corpora.books import sample_book_passages
from storyflow.runner import run, save


def main(smk):
    p = smk.params
    passages = sample_book_passages(
        smk.input.manifest,
        list(smk.input.books),
        ids=list(p.ids),
        columns=p.columns,
        path_template=p.path_template,
        passages=p.passages,
        pov=p.pov,
        seed=p.seed,
        spacy_model=p.spacy_model,
    )
    save(
        smk.output,
        stories=passages.stories,
        sentences=passages.sentences,
        counts=passages.counts,
        sample=passages.sample,
        pov=passages.pov,
    )


run(main, snakemake)
