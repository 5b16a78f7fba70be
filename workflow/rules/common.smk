# Config validation and the lookups the rules use, one section per stage. Decisions made from the
# config (which corpora, which regressions, which settings change a table) live in the library
# (storyflow.plan, storyflow.corpora, storyflow.lm.registry); here they are only looked up.
import re
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version, validate

from storyflow import corpora, plan
from storyflow.lm.registry import model_specs

min_version("9.0")


validate(config, schema="../schemas/config.schema.yaml")

MODEL_SPECS = model_specs(config["models"])  # typed specs, defaults applied once
MODELS = list(MODEL_SPECS)
USER_CORPORA = list(config["corpora"])  # the user's CSV corpora (config `corpora:`)
CORPORA = plan.sequentiality_corpora(config)
SHARDS = [f"{k:03d}" for k in range(config["nll"]["shards"])]
NS = config["narrative_sense"]
NS_SOURCES = plan.narrative_sense_sources(config)
REGRESSION_SPECS, REGRESSION_SKIPPED = plan.regression_plan(config)
for _spec, _reason in REGRESSION_SKIPPED.items():
    logger.warning(f"regression {_spec} skipped: {_reason}")


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


def is_activated(section):
    """Whether the optional stage ``section`` (covariates, regression, ...) is switched on."""
    return config[section]["enabled"]


# --- corpora (storyflow.corpora is the registry) ----------------------------------------------


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
    return plan.contrasts(config, wildcards.corpus)


# --- books ------------------------------------------------------------------------------------


def book_manifest():
    return corpus_file("books")


def selected_books():
    """The sampled manifest rows, each with ``source``: its file in the mirror or resources/."""
    from storyflow.corpora.books import read_manifest, select_books

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


# --- models and NLL ---------------------------------------------------------------------------


def model_source(wildcards):
    return dict(MODEL_SPECS[wildcards.model].source)


def model_scoring(wildcards):
    """The model's settings that change its scores (storyflow.lm.registry.ModelSpec)."""
    return MODEL_SPECS[wildcards.model].scoring_settings()


def nll_settings(wildcards):
    return plan.nll_settings(config, wildcards.corpus)


def nll_shards(wildcards):
    return expand(
        "results/{corpus}/nll/{model}/shard-{shard}.parquet",
        corpus=wildcards.corpus,
        model=wildcards.model,
        shard=SHARDS,
    )


# --- sequentiality ----------------------------------------------------------------------------


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


def connective_lexicon():
    """The configured connective lexicon, else the one packaged with storyflow."""
    path = config["covariates"]["connectives"]
    return path or str(Path(workflow.basedir) / "src/storyflow/data/connectives.tsv")


def narrative_sense_scores(wildcards):
    """The corpus's narrative-sense story scores, a story-level regression covariate when the
    narrative-sense stage scores this corpus and regression.narrative_sense is on; else nothing.
    """
    if (
        is_activated("narrative_sense")
        and config["regression"]["narrative_sense"]
        and wildcards.corpus in NS["targets"]
    ):
        return [f"results/{wildcards.corpus}/narrative_sense/story_scores.parquet"]
    return []


# --- narrative sense --------------------------------------------------------------------------


def ns_source_input(wildcards):
    """The file a corpus is read from (the books' manifest for book passages)."""
    if wildcards.source == "hippocorpus":
        return hippocorpus_csv()
    return corpus_file(wildcards.source)


def ns_source_settings(wildcards):
    return plan.narrative_sense_settings(config, wildcards.source)


# --- final products ---------------------------------------------------------------------------


def final_outputs():
    """Every final table and figure the config asks for (rule all)."""
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
    # covariates and regressions: the HIPPOCORPUS sentences (docs/method.md §6 and §7)
    if is_activated("covariates"):
        outputs.append("results/hippocorpus/covariates.parquet")
    if is_activated("regression"):
        outputs += [
            "results/hippocorpus/tables/regression_coefficients.csv",
            "results/hippocorpus/tables/regression_diagnostics.csv",
            "results/hippocorpus/figures/regression_coefficients.png",
        ]
    if is_activated("narrative_sense"):
        outputs += expand(
            [
                "results/{target}/tables/narrative_sense.csv",
                "results/{target}/figures/pair_scores.png",
            ],
            target=NS["targets"],
        )
    return outputs
