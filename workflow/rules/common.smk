# Config validation and the small lookup helpers every rule uses.
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version, validate

min_version("9.0")


validate(config, schema="../schemas/config.schema.yaml")

CORPORA = ["hippocorpus"] + (["books"] if config["books"]["enabled"] else [])
MODEL_SPECS = {model["name"]: model for model in config["models"]}
MODELS = list(MODEL_SPECS)
if len(MODELS) != len(config["models"]):
    raise ValueError("config: model names must be unique")


SHARDS = [f"{k:03d}" for k in range(config["nll"]["shards"])]


# Fetching data and models needs the internet, which cluster compute nodes often lack.
localrules:
    download_hippocorpus,
    materialize_model,


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


def data_path(relative):
    """``relative`` inside the data mirror (an absolute path stays as it is)."""
    mirror = config["data"]["mirror"]
    if Path(relative).is_absolute() or not mirror:
        return Path(relative)
    return Path(mirror) / relative


def book_manifest():
    return str(data_path(config["books"]["manifest"]))


def selected_books():
    """The sampled manifest rows, each with ``source``: its file in the mirror or resources/."""
    from storyflow.books import read_manifest, select_books

    books, columns = config["books"], config["books"]["columns"]
    manifest = read_manifest(
        book_manifest(),
        id_column=columns["id"],
        genre_column=columns["genre"],
        path_column=columns["path"],
        path_template=books["path_template"],
    )
    sample = books["sample"]
    chosen = select_books(manifest, sample["per_genre"], sample["seed"])
    fetched = [
        f"resources/data/books/{g}/{i}.txt"
        for g, i in zip(chosen.genre, chosen.document_id)
    ]
    chosen["source"] = [
        p if Path(p).is_file() else f for p, f in zip(chosen.path, fetched)
    ]
    return chosen


BOOKS = selected_books() if config["books"]["enabled"] else None


def book_files():
    return [] if BOOKS is None else list(BOOKS["source"])


def book_ids():
    return [] if BOOKS is None else list(BOOKS["document_id"])


def missing_books():
    return [source for source in book_files() if source.startswith("resources/")]


def missing_book_ids():
    return [
        i
        for i, source in zip(book_ids(), book_files())
        if source.startswith("resources/")
    ]


def book_path_template(wildcards):
    return config["books"]["path_template"]


def book_url(wildcards):
    return config["books"]["url"]


def corpus_contrasts(wildcards):
    return config[wildcards.corpus]["contrasts"]


def model_source(wildcards):
    return MODEL_SPECS[wildcards.model]["source"]


def nll_settings(wildcards):
    """The NLL settings that change scores (shards only decide which job scores a story).

    Books have no topic: their formulations come from ``books.formulations``.
    """
    settings = {key: value for key, value in config["nll"].items() if key != "shards"}
    if wildcards.corpus == "books":
        settings["formulations"] = config["books"]["formulations"]
    return settings


def model_scoring(wildcards):
    """The model entry's keys that change its scores (labels such as family do not)."""
    spec = MODEL_SPECS[wildcards.model]
    keys = ("name", "variant", "prompt", "backend", "dtype")
    return {key: spec[key] for key in keys if key in spec}


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
    """Whether the optional stage ``section`` (covariates, regression) is switched on."""
    return config[section]["enabled"]


def connective_lexicon():
    """The configured connective lexicon, else the one packaged with storyflow."""
    path = config["covariates"]["connectives"]
    return path or str(Path(workflow.basedir) / "src/storyflow/data/connectives.tsv")


def regression_plan():
    """Regression specifications to fit, and those skipped with the reason (history not scored)."""
    if not is_activated("regression"):
        return [], {}
    reg, nll = config["regression"], config["nll"]
    if not is_activated("covariates"):
        raise ValueError("config: regression.enabled needs covariates.enabled")
    if reg["formulation"] not in nll["formulations"]:
        raise ValueError(
            f"config: regression.formulation {reg['formulation']!r} is not in nll.formulations"
        )
    fitted, skipped = [], {}
    for history in reg["histories"]:
        if int(history) not in config["covariates"]["windows"]:
            raise ValueError(
                f"config: regression history {history} needs covariate window {history}"
            )
        for kind in reg["kinds"]:
            if int(history) <= nll["max_history"]:
                fitted.append(f"{kind}_h{history}")
            else:
                skipped[f"{kind}_h{history}"] = (
                    f"history {history} not scored (nll.max_history = {nll['max_history']})"
                )
    if not fitted:
        raise ValueError(
            "config: no regression history is scored (see nll.max_history)"
        )
    for spec, reason in skipped.items():
        logger.warning(f"regression {spec} skipped: {reason}")
    return fitted, skipped


REGRESSION_SPECS, REGRESSION_SKIPPED = regression_plan()


def final_outputs():
    outputs = [
        "results/{corpus}/tables/sample_counts.csv",
        "results/{corpus}/tables/sequentiality_by_type.csv",
        "results/{corpus}/tables/effect_sizes.csv",
        "results/{corpus}/tables/contrast_summary.csv",
        "results/{corpus}/figures/sequentiality_by_history.png",
        "results/{corpus}/figures/sequentiality_by_contrast.png",
        "results/{corpus}/figures/effect_sizes.png",
    ]
    # covariates and regressions: the HIPPOCORPUS sentences (method.md sections 6 and 7)
    sentence_level = []
    if is_activated("covariates"):
        sentence_level.append("results/hippocorpus/covariates.parquet")
    if is_activated("regression"):
        sentence_level += [
            "results/hippocorpus/tables/regression_coefficients.csv",
            "results/hippocorpus/tables/regression_diagnostics.csv",
            "results/hippocorpus/figures/regression_coefficients.png",
        ]
    narrative_sense = []
    if is_activated("narrative_sense"):
        narrative_sense = expand(
            [
                "results/{target}/tables/narrative_sense.csv",
                "results/{target}/figures/pair_scores.png",
            ],
            target=config["narrative_sense"]["targets"],
        )
    return expand(outputs, corpus=CORPORA) + sentence_level + narrative_sense


# narrative sense (workflow/rules/narrative_sense.smk, docs/narrative_sense.md)
NS = config["narrative_sense"]
NS_SOURCES = sorted(set(NS["reference"]) | set(NS["targets"]))


def ns_source_input(wildcards):
    """The file a corpus is read from (the books' manifest for book passages)."""
    if wildcards.source == "hippocorpus":
        return hippocorpus_csv()
    if wildcards.source == "books":
        return book_manifest()
    return str(data_path(NS[wildcards.source]))


def narrative_sense_scores(wildcards):
    """The corpus's narrative-sense story scores, a story-level regression covariate when the
    stage scores this corpus and regression.narrative_sense is on; else nothing."""
    if (
        is_activated("narrative_sense")
        and config["regression"]["narrative_sense"]
        and wildcards.corpus in NS["targets"]
    ):
        return [f"results/{wildcards.corpus}/narrative_sense/story_scores.parquet"]
    return []


def ns_source_settings(wildcards):
    """Only the settings that change the source's lemma table (precise reruns)."""
    settings = {"limit": NS["limit"]}
    if wildcards.source == "hippocorpus":
        settings["story_types"] = config["hippocorpus"]["story_types"]
    if wildcards.source == "books":
        settings["books"] = NS["books_reference"]
        settings["seed"] = NS["seed"]
        settings["columns"] = config["books"]["columns"]
        settings["path_template"] = config["books"]["path_template"]
    return settings
