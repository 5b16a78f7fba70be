"""Rule detect_plot_holes_nli: the NLI baseline of one model on the made stories (O and F)."""

from pathlib import Path

from storyflow.lm.registry import ModelSpec
from storyflow.measures.plot_holes.nli import NliSettings, nli_answers
from storyflow.measures.plot_holes.scoring import read_made, shown_versions
from storyflow.runner import run


def main(smk):
    made, _ = read_made(list(smk.input.made), smk.params.verdicts)
    answers = nli_answers(
        ModelSpec.from_config(smk.params.model),
        smk.input.gguf,
        shown_versions(made),
        NliSettings.from_config(smk.params.settings),
        n_threads=smk.threads,
    )
    Path(smk.output.answers).parent.mkdir(parents=True, exist_ok=True)
    answers.to_parquet(smk.output.answers, index=False)


run(main, snakemake)
