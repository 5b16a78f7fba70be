"""Rule score_plot_holes: scores per detector and maker, surprisal contrasts, story measures."""

from pathlib import Path

from storyflow import tables
from storyflow.measures.plot_holes.scoring import score_corpus
from storyflow.runner import run


def main(smk):
    outputs = score_corpus(
        made_paths=list(smk.input.made),
        answer_paths=[*smk.input.answers, *smk.input.nli],
        surprisal_paths=list(smk.input.surprisal),
        stories=tables.read(tables.STORIES, smk.input.stories, needs=["story_id"]),
        corpus=smk.wildcards.corpus,
        settings=smk.params.settings,
        detectors=list(smk.params.detectors),
        surprisal_models=list(smk.params.surprisal_models),
    )
    Path(smk.output.scores).parent.mkdir(parents=True, exist_ok=True)
    outputs.scores.to_csv(smk.output.scores, index=False)
    outputs.surprisal.to_csv(smk.output.surprisal, index=False)
    outputs.answers.to_parquet(smk.output.answers, index=False)
    outputs.story_measures.to_parquet(smk.output.story_measures, index=False)


run(main, snakemake)
