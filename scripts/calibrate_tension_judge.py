"""Rule calibrate_tension_judge: one forecaster's ROCStories forecasts against their right and
wrong endings (sentence-embedding cosines, seeded halves) and the embedding judge's threshold
fitted on them."""

from storyflow import tables
from storyflow.lm.embeddings import load_encoder
from storyflow.measures.tension.calibration import calibrate_threshold, ending_cosines
from storyflow.runner import run, save


def main(smk):
    p = smk.params
    cloze = tables.read(tables.STORIES, smk.input.stories)
    endings = tables.read(tables.TENSION_ENDINGS, smk.input.endings)
    encode = load_encoder(p.embedding_model, threads=smk.threads, key="tension.embedding.model")
    cosines = ending_cosines(endings, cloze, encode, p.seed, p.chunk_words)
    _, table = calibrate_threshold(endings, cosines, p.seed, p.embedding_model)
    save(smk.output, table=table, cosines=cosines)


run(main, snakemake)
