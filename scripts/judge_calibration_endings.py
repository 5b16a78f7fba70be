"""Rule judge_calibration_endings: an LLM judge's verdicts on one forecaster's held-out
ROCStories forecasts, each against the right and the wrong ending (the judge's validity check;
two judge prompts per forecast, timed in the log)."""

from storyflow import tables
from storyflow.lm.connect import job_spec, open_model
from storyflow.measures.tension import judges
from storyflow.measures.tension.calibration import judge_calibration
from storyflow.runner import run


def main(smk):
    p = smk.params
    endings = tables.read(tables.TENSION_ENDINGS, smk.input.endings)
    cloze = tables.read(tables.STORIES, smk.input.stories)
    spec = job_spec(p.judge_model, smk.config["models"])
    model = open_model(spec, smk.input.get("gguf"), n_threads=smk.threads)
    frame = judges.JudgePrompt(p.judge["system"], p.judge["user"], p.judge["cue"])
    stories = cloze[cloze["story_id"].isin(endings["story_id"])]
    actual = [*stories["right_ending"], *stories["wrong_ending"]]
    model.n_ctx = judges.judge_window(model, frame, actual, endings["text"].tolist())
    verdicts = judge_calibration(
        endings,
        cloze,
        p.seed,
        lambda prompt: model.answer(prompt, judges.YES_NO),
        lambda actual, predicted: frame.render(model, actual, predicted),
        spec.name,
    )
    verdicts.to_parquet(smk.output.judgments, index=False)


run(main, snakemake)
