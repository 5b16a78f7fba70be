"""Rule score_plot_holes: scores per detector and maker (with each detector's validity
verdict), surprisal contrasts, story measures and the versions left out for length."""

from storyflow import tables
from storyflow.measures.plot_holes.scoring import score_corpus
from storyflow.runner import run, save_fields


def main(smk):
    outputs = score_corpus(
        made_paths=list(smk.input.made),
        answer_paths=[*smk.input.answers, *smk.input.nli],
        surprisal_paths=list(smk.input.surprisal),
        validity_path=smk.input.validity,
        verdicts_path=next(iter(smk.input.verdicts), None),
        min_annotators=smk.params.min_annotators,
        stories=tables.read(tables.STORIES, smk.input.stories, needs=["story_id"]),
        corpus=smk.wildcards.corpus,
        settings=smk.params.settings,
        detectors=list(smk.params.detectors),
        surprisal_models=list(smk.params.surprisal_models),
    )
    save_fields(smk.output, outputs)


run(main, snakemake)
