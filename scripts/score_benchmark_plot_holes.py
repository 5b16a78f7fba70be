"""Rule score_benchmark_plot_holes: CEEval-Full and the other scores on FlawedFictions."""

from storyflow.measures.plot_holes.scoring import score_benchmark
from storyflow.runner import run


def main(smk):
    scores, answers = score_benchmark(
        made_path=smk.input.made,
        answer_paths=[*smk.input.answers, *smk.input.nli],
        validity_path=smk.input.validity,
        settings=smk.params.settings,
    )
    scores.to_csv(smk.output.scores, index=False)
    answers.to_parquet(smk.output.answers, index=False)


run(main, snakemake)
