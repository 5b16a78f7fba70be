# Config validation and the small lookup helpers every rule uses.
from pathlib import Path

from snakemake.utils import min_version, validate

min_version("9.0")


validate(config, schema="../schemas/config.schema.yaml")

CORPORA = ["hippocorpus"]
MODEL_SPECS = {model["name"]: model for model in config["models"]}
MODELS = list(MODEL_SPECS)
if len(MODELS) != len(config["models"]):
    raise ValueError("config: model names must be unique")


SHARDS = [f"{k:03d}" for k in range(config["nll"]["shards"])]


wildcard_constraints:
    corpus="|".join(CORPORA),
    model="|".join(MODELS),
    shard=r"\d{3}",


def hippocorpus_csv():
    """The corpus CSV: the mirror's copy when present, else the download rule's output."""
    mirror = config["data"]["mirror"]
    if mirror:
        candidate = Path(mirror) / config["hippocorpus"]["mirror_path"]
        if candidate.is_file():
            return str(candidate)
    return "resources/data/hippocorpus/hippoCorpusV2.csv"


def model_source(wildcards):
    return MODEL_SPECS[wildcards.model]["source"]


def nll_settings(wildcards):
    """The NLL settings that change scores (shards only decide which job scores a story)."""
    return {key: value for key, value in config["nll"].items() if key != "shards"}


def nll_shards(wildcards):
    return expand(
        "results/{corpus}/nll/{model}/shard-{shard}.parquet",
        corpus=wildcards.corpus,
        model=wildcards.model,
        shard=SHARDS,
    )


def story_tables(wildcards):
    return expand(
        "results/{corpus}/sequentiality/{model}/stories.parquet",
        corpus=wildcards.corpus,
        model=MODELS,
    )


def final_outputs():
    return expand(
        [
            "results/{corpus}/tables/sample_counts.csv",
            "results/{corpus}/tables/sequentiality_by_type.csv",
            "results/{corpus}/tables/effect_sizes.csv",
            "results/{corpus}/figures/sequentiality_by_history.png",
            "results/{corpus}/figures/effect_sizes.png",
        ],
        corpus=CORPORA,
    )
