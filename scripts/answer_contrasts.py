"""Rule answer_contrasts: one corpus's contrasts answered, each model's and their mean's
median Hedges' g with its bootstrap interval, read against 0 and the equivalence band."""

from storyflow import stats, tables
from storyflow.contrast_answers.answers import AnswerSettings, answer_contrasts
from storyflow.runner import run


def main(smk):
    separation = list(smk.input.get("separation", []))  # [] or [the corpus's separation table]
    settings = smk.params["settings"]
    table = answer_contrasts(
        stats.read_story_tables(smk.input["stories"]),
        tables.read(tables.STORIES, smk.input["labels"], needs=["story_id"]),
        list(settings["contrasts"]),
        AnswerSettings.from_params(settings),
        corpus=smk.wildcards.corpus,
        cost=tables.read_all(tables.NLL_COST, smk.input["nll_cost"]),
        separation=tables.read(tables.MEASURE_SEPARATION, separation[0]) if separation else None,
        leave_out=settings.get("leave_out", ""),
    )
    table.to_csv(smk.output["table"], index=False)


run(main, snakemake)
