"""Rule sample_calibration_endings: the forecaster's K endings of ROCStories stories (from their
four context sentences), for the embedding judge's calibration."""

from pathlib import Path

from storyflow import tables
from storyflow.lm.backends.llama_cpp import VocabOnly
from storyflow.lm.registry import ModelSpec
from storyflow.measures.tension import calibration
from storyflow.measures.tension.forecast import forecast_cuts
from storyflow.runner import run


def main(smk):
    p = smk.params
    spec = ModelSpec.from_config({**p.model, "source": {"path": smk.input.gguf}})
    cloze = tables.read(tables.STORIES, smk.input.stories)
    cloze = calibration.calibration_stories(cloze, p.stories)
    cuts = calibration.calibration_cuts(cloze, VocabOnly(smk.input.gguf).tokenize, spec.name)
    endings = forecast_cuts(spec, smk.input.gguf, cuts, p.k, p.sampling, p.prompts, smk.threads)
    Path(smk.output.endings).parent.mkdir(parents=True, exist_ok=True)
    endings.to_parquet(smk.output.endings, index=False)


run(main, snakemake)
