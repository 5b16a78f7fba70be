"""Rule read_plot_hole_benchmark: the FlawedFictions file as made stories with gold lines."""

from storyflow.measures.plot_holes.benchmark import read_benchmark
from storyflow.runner import run
from storyflow.sentences import load_spacy


def main(smk):
    made = read_benchmark(
        smk.input.benchmark[0], load_spacy(smk.params.spacy_model, exclude=("lemmatizer",))
    )
    made.to_parquet(smk.output.made, index=False)


run(main, snakemake)
