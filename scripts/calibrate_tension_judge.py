"""Rule calibrate_tension_judge: the embedding judge's threshold from ROCStories cloze stories."""

from pathlib import Path

from storyflow.corpora.rocstories import read_rocstories
from storyflow.lm.embeddings import load_encoder
from storyflow.measures.tension.judges import calibrate_threshold
from storyflow.runner import run


def main(smk):
    settings = smk.params.embedding
    cloze = read_rocstories(smk.input.cloze)
    cloze = cloze.head(settings["calibration_stories"])
    encode = load_encoder(settings["model"], threads=smk.threads, key="tension.embedding.model")
    _, table = calibrate_threshold(cloze, encode, settings["seed"])
    Path(smk.output.table).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(smk.output.table, index=False)


run(main, snakemake)
