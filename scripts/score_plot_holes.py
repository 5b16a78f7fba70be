"""Rule score_plot_holes: scores per detector and maker (with each detector's validity
verdict), surprisal contrasts, story measures and the versions left out for length."""

from storyflow import tables
from storyflow.measures.plot_holes.scoring import score_corpus
from storyflow.runner import run


def main(smk):
    outputs = score_corpus(
        made_paths=list(smk.input.made),
        answer_paths=[*smk.input.answers, *smk.input.nli],
        surprisal_paths=list(smk.input.surprisal),
        validity_path=smk.input.validity,
        stories=tables.read(tables.STORIES, smk.input.stories, needs=["story_id"]),
        corpus=smk.wildcards.corpus,
        settings=smk.params.settings,
        detectors=list(smk.params.detectors),
        surprisal_models=list(smk.params.surprisal_models),
    )
    outputs.scores.to_csv(smk.output.scores, index=False)
    outputs.surprisal.to_csv(smk.output.surprisal, index=False)
    outputs.answers.to_parquet(smk.output.answers, index=False)
    outputs.story_measures.to_parquet(smk.output.story_measures, index=False)
    outputs.left_out.to_csv(smk.output.left_out, index=False)


run(main, snakemake)
