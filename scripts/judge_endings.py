"""Rule judge_endings: one judge's verdict on every ending, the no-rate curves and the story
statistics."""

import logging

from storyflow import tables
from storyflow.lm.connect import job_spec, open_model
from storyflow.measures.tension import curves, judges
from storyflow.runner import run


def main(smk):
    log = logging.getLogger("storyflow.judge_endings")
    settings = smk.params.judge
    endings = tables.read(tables.TENSION_ENDINGS, smk.input.endings)
    cuts = tables.read(tables.TENSION_CUTS, smk.input.cuts)
    if settings["kind"] == "embedding":
        from storyflow.lm.embeddings import load_encoder

        threshold = settings["threshold"]
        if threshold is None:
            calibration = tables.read(tables.TENSION_CALIBRATION, smk.input.calibration)
            threshold = float(calibration["threshold"].iloc[0])
            log.info("calibrated threshold %.4f (%s)", threshold, smk.input.calibration)
        encode = load_encoder(settings["model"], threads=smk.threads, key="tension.embedding.model")
        verdicts = judges.judge_by_embedding(
            endings, cuts, encode, threshold, settings["chunk_words"]
        )
    else:
        spec = job_spec(smk.params.judge_model, smk.config["models"])
        model = open_model(spec, smk.input.get("gguf"), n_threads=smk.threads)
        frame = judges.JudgePrompt(settings["system"], settings["user"], settings["cue"])
        model.n_ctx = judges.judge_window(
            model, frame, cuts["remainder"].tolist(), endings["text"].tolist()
        )
        verdicts = judges.judge_by_model(
            endings,
            cuts,
            lambda prompt: model.answer(prompt, judges.YES_NO),
            lambda actual, predicted: frame.render(model, actual, predicted),
            spec.name,
        )
    log.info("%s", verdicts["status"].value_counts().to_dict())
    rates = curves.cut_no_rates(verdicts)
    stories = curves.story_statistics(rates, curves.CurveSettings(**smk.params.curves))
    verdicts.to_parquet(smk.output.judgments, index=False)
    rates.to_parquet(smk.output.curves, index=False)
    stories.to_parquet(smk.output.stories, index=False)


run(main, snakemake)
