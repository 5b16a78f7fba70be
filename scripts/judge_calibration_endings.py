"""Rule judge_calibration_endings: an LLM judge's verdicts on one forecaster's held-out
ROCStories forecasts, each against the right and the wrong ending (the judge's validity check;
two judge prompts per forecast, timed in the log)."""

import logging
import time

from storyflow import tables
from storyflow.lm.connect import job_spec, open_model
from storyflow.measures.tension import judges
from storyflow.measures.tension.calibration import judge_calibration
from storyflow.runner import run


def main(smk):
    log = logging.getLogger("storyflow.judge_calibration_endings")
    p = smk.params
    endings = tables.read(tables.TENSION_ENDINGS, smk.input.endings)
    cloze = tables.read(tables.STORIES, smk.input.stories)
    spec = job_spec(p.judge_model, smk.config["models"])
    model = open_model(spec, smk.input.get("gguf"), n_threads=smk.threads)
    frame = judges.JudgePrompt(p.judge["system"], p.judge["user"], p.judge["cue"])
    stories = cloze[cloze["story_id"].isin(endings["story_id"])]
    model.n_ctx = judges.judge_window(
        model,
        frame,
        [*stories["right_ending"], *stories["wrong_ending"]],
        endings["text"].tolist(),
    )
    start = time.perf_counter()
    verdicts = judge_calibration(
        endings,
        cloze,
        p.seed,
        lambda prompt: model.answer(prompt, judges.YES_NO),
        lambda actual, predicted: frame.render(model, actual, predicted),
        spec.name,
    )
    seconds = time.perf_counter() - start
    forecasts = verdicts.loc[verdicts["ending"] == "right", "status"].ne("empty forecast").sum()
    log.info(
        "%s judged %d held-out forecasts of %s against both endings: %d prompts in %.1f s "
        "(%.2f s per forecast, %d tokens evaluated); %s",
        spec.name,
        forecasts,
        p.forecaster,
        2 * forecasts,
        seconds,
        seconds / max(forecasts, 1),
        model.tokens_evaluated,
        verdicts["status"].value_counts().to_dict(),
    )
    verdicts.to_parquet(smk.output.judgments, index=False)


run(main, snakemake)
