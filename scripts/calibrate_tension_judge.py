"""Rule calibrate_tension_judge: the embedding judge's threshold for one forecaster, from its
forecasts of ROCStories stories against their right and wrong endings."""

from pathlib import Path

from storyflow import tables
from storyflow.lm.embeddings import load_encoder
from storyflow.measures.tension.calibration import calibrate_threshold
from storyflow.runner import run


def main(smk):
    p = smk.params
    cloze = tables.read(tables.STORIES, smk.input.stories)
    endings = tables.read(tables.TENSION_ENDINGS, smk.input.endings)
    encode = load_encoder(p.embedding_model, threads=smk.threads, key="tension.embedding.model")
    _, table = calibrate_threshold(endings, cloze, encode, p.seed, p.embedding_model)
    Path(smk.output.table).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(smk.output.table, index=False)


run(main, snakemake)
