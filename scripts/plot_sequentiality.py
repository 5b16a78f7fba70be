"""Rule plot_sequentiality: figure of mean sequentiality against history size per story type."""

from storyflow import tables
from storyflow.figures import sequentiality as figures
from storyflow.figures.common import FigureSettings
from storyflow.runner import run


def main(smk):
    summary = tables.read(tables.SUMMARY, smk.input["table"])
    settings = FigureSettings.from_params(smk.params["figures"])
    # the corpus's word for its groups ("group" for a CSV corpus); "story type" without one
    word = smk.params.get("group_word", "story type")
    paths = [smk.output["png"], smk.output["pdf"]]
    figures.plot_sequentiality(summary, paths, settings, group_word=word)


run(main, snakemake)
