# Config validation and the lookups every rule uses. Helpers of one stage live in its own
# rules file (books.smk, narrative_sense.smk, regression.smk).
import re
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version, validate

from storyflow import corpora
from storyflow.lm.registry import model_specs

min_version("9.0")


validate(config, schema="../schemas/config.schema.yaml")

# The model registry: typed specs, defaults applied once (storyflow.lm.registry).
MODEL_SPECS = model_specs(config["models"])
MODELS = list(MODEL_SPECS)

# Corpora of the sequentiality analysis: HIPPOCORPUS, the book genres when switched on, and
# the user's own CSV corpora (config `corpora:`; storyflow.corpora is the registry).
USER_CORPORA = list(config["corpora"])
CORPORA = (
    ["hippocorpus"] + (["books"] if config["books"]["enabled"] else []) + USER_CORPORA
)

SHARDS = [f"{k:03d}" for k in range(config["nll"]["shards"])]


def one_of(names):
    """A wildcard constraint matching exactly ``names`` (nothing at all when it is empty)."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


# Fetching data and models needs the internet, which cluster compute nodes often lack.
localrules:
    download_hippocorpus,
    materialize_model,


wildcard_constraints:
    corpus=one_of(CORPORA),
    model=one_of(MODELS),
    shard=r"\d{3}",


def corpus_file(name):
    """Corpus ``name``'s file as configured (inside data.mirror unless absolute)."""
    return str(corpora.configured_path(config, name))


def hippocorpus_csv():
    """The corpus CSV: the mirror's copy when present, else the download rule's output."""
    candidate = corpora.configured_path(config, "hippocorpus")
    if config["data"]["mirror"] and candidate.is_file():
        return str(candidate)
    return "resources/data/hippocorpus/hippoCorpusV2.csv"


def user_corpus_csv(wildcards):
    return corpus_file(wildcards.corpus)


def user_corpus_columns(wildcards):
    return config["corpora"][wildcards.corpus]["columns"]


def corpus_contrasts(wildcards):
    """The contrasts declared for a corpus (its own block, or its `corpora:` entry)."""
    if wildcards.corpus in config["corpora"]:
        return config["corpora"][wildcards.corpus]["contrasts"]
    return config[wildcards.corpus]["contrasts"]


def model_source(wildcards):
    return dict(MODEL_SPECS[wildcards.model].source)


def model_scoring(wildcards):
    """The model's settings that change its scores (storyflow.lm.registry.ModelSpec)."""
    return MODEL_SPECS[wildcards.model].scoring_settings()


def nll_settings(wildcards):
    """The NLL settings that change scores (shards only decide which job scores a story).

    Books have no topic: their formulations come from ``books.formulations``.
    """
    settings = {key: value for key, value in config["nll"].items() if key != "shards"}
    if wildcards.corpus == "books":
        settings["formulations"] = config["books"]["formulations"]
    return settings


def nll_shards(wildcards):
    return expand(
        "results/{corpus}/nll/{model}/shard-{shard}.parquet",
        corpus=wildcards.corpus,
        model=wildcards.model,
        shard=SHARDS,
    )


def per_model_tables(wildcards, level):
    """Every model's sequentiality table of ``level`` ("stories" or "sentences")."""
    return expand(
        "results/{corpus}/sequentiality/{model}/{level}.parquet",
        corpus=wildcards.corpus,
        model=MODELS,
        level=level,
    )


def story_tables(wildcards):
    return per_model_tables(wildcards, "stories")


def sentence_tables(wildcards):
    return per_model_tables(wildcards, "sentences")


def is_activated(section):
    """Whether the optional stage ``section`` (covariates, regression, ...) is switched on."""
    return config[section]["enabled"]


def final_outputs():
    """Every final table and figure of the config (rule all)."""
    outputs = expand(
        [
            "results/{corpus}/tables/sample_counts.csv",
            "results/{corpus}/tables/sequentiality_by_type.csv",
            "results/{corpus}/tables/effect_sizes.csv",
            "results/{corpus}/tables/contrast_summary.csv",
            "results/{corpus}/figures/sequentiality_by_history.png",
            "results/{corpus}/figures/sequentiality_by_contrast.png",
            "results/{corpus}/figures/effect_sizes.png",
        ],
        corpus=CORPORA,
    )
    return (
        outputs
        + covariate_outputs()
        + regression_outputs()
        + narrative_sense_outputs()
    )
