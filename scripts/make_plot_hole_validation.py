"""Rule make_plot_hole_validation: the detectors' validation pool (controlled pairs of
HIPPOCORPUS stories outside the analysed sample)."""

from storyflow import tables
from storyflow.corpora.hippocorpus import read_hippocorpus
from storyflow.measures.plot_holes.validation import validation_pool
from storyflow.runner import run, save
from storyflow.sentences import load_spacy


def main(smk):
    p = smk.params
    corpus, _ = read_hippocorpus(smk.input.csv, list(p.story_types))
    made, coverage, skipped = validation_pool(
        corpus,
        tables.read(tables.STORIES, smk.input.sample, needs=["story_id"])["story_id"],
        load_spacy(p.spacy_model),
        load_spacy(p.spacy_model, exclude=("lemmatizer",)),
        pairs=int(p.pairs),
        max_words=int(p.max_words),
        seed=int(p.seed),
        min_sentences=int(p.min_sentences),
        classes=list(p.classes),
    )
    save(smk.output, made=made, coverage=coverage, skipped=skipped)


run(main, snakemake)
