"""Rule sample_endings: K endings per cut from the forecaster (one batch per cut)."""

import logging
import time
from pathlib import Path

from storyflow import tables
from storyflow.lm.backends.llama_cpp import VocabOnly
from storyflow.lm.connect import open_sampler
from storyflow.lm.registry import ModelSpec
from storyflow.measures.tension import forecast
from storyflow.runner import run


def main(smk):
    log = logging.getLogger("storyflow.sample_endings")
    spec = ModelSpec.from_config({**smk.params.model, "source": {"path": smk.input.gguf}})
    settings = forecast.check_settings(smk.params.k, smk.params.sampling)
    prompts = smk.params.prompts
    frame = forecast.ForecastPrompt(prompts["system"], prompts["user"], prompts["cue"], spec.prompt)
    cuts = tables.read(tables.TENSION_CUTS, smk.input.cuts)
    llm = VocabOnly(smk.input.gguf).llm
    texts = [frame.render(llm, prefix, spec.name) for prefix in cuts["prefix"]]
    sampler = open_sampler(
        spec,
        smk.input.gguf,
        n_ctx=forecast.prompt_window(llm, texts, settings.max_tokens),
        n_seq=min(smk.params.k, smk.params.sampling["n_seq"]),
        n_threads=smk.threads,
    )
    start = time.perf_counter()
    endings = forecast.sample_endings(sampler, texts, cuts, smk.params.k, settings)
    seconds = time.perf_counter() - start
    log.info(
        "%d endings of %d cuts in %.1f s: %d generated tokens (%.1f tokens/s), %d evaluated",
        len(endings), len(cuts), seconds, endings["n_tokens"].sum(),
        endings["n_tokens"].sum() / max(seconds, 1e-9), getattr(sampler, "tokens_evaluated", -1),
    )  # fmt: skip
    Path(smk.output.endings).parent.mkdir(parents=True, exist_ok=True)
    endings.to_parquet(smk.output.endings, index=False)


run(main, snakemake)
