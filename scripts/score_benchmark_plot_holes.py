"""Rule score_benchmark_plot_holes: CEEval-Full and the other scores on FlawedFictions."""

from storyflow.measures.plot_holes.scoring import score_benchmark
from storyflow.runner import run, save


def main(smk):
    scores, answers = score_benchmark(
        made_path=smk.input.made,
        answer_paths=[*smk.input.answers, *smk.input.nli],
        validity_path=smk.input.validity,
        settings=smk.params.settings,
    )
    save(smk.output, scores=scores, answers=answers)


run(main, snakemake)
