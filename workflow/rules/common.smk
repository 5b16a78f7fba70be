# Config validation and the lookups the rules use, one section per stage. Decisions made from the
# config (which corpora, which regressions, which settings change a table) live in the library
# (storyflow.plan, storyflow.corpora, storyflow.lm.registry); here they are only looked up.
import re
import sys
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version, validate

from storyflow import corpora, plan, validity
from storyflow.corpora.selection import SAMPLED
from storyflow.corpora.user_csv import group_values
from storyflow.errors import StoryflowError
from storyflow.lm.registry import model_specs

min_version("9.0")


def config_sources():
    """The config mappings in the order Snakemake merged them (for either/or keys)."""
    import yaml

    user = [Path(f).resolve() for f in workflow.config_settings.configfiles]
    own = [f for f in workflow.configfiles if Path(f).resolve() not in user]
    files = [*own, *user]
    return [yaml.safe_load(Path(f).read_text()) for f in files] + [
        workflow.config_settings.config
    ]


def checked(decide, *args):
    """``decide(*args)`` at parse time; a config mistake ends the run with its message alone."""
    try:
        return decide(*args)
    except StoryflowError as err:
        logger.error(f"storyflow: {err}")
        sys.exit(1)


checked(plan.resolve_alternatives, config, config_sources())
for _key in plan.resolve_model_references(config, config_sources()):
    logger.info(
        f"storyflow: {_key} named models of an earlier config file: the role decides"
    )
validate(config, schema="../schemas/config.schema.yaml")


MODEL_SPECS = checked(
    model_specs, config["models"]
)  # typed specs, defaults applied once
MODELS = list(MODEL_SPECS)
SEQUENTIALITY_MODELS = checked(
    plan.sequentiality_models, config
)  # local, role sequentiality
USER_CORPORA = list(config["corpora"])  # the user's CSV corpora (config `corpora:`)
SAMPLED_CORPORA = list(SAMPLED)  # HANNA, ROCStories (config `stories:`)
CORPORA = plan.sequentiality_corpora(config)
SHARDS = [f"{k:03d}" for k in range(config["nll"]["shards"])]
NS = config["narrative_sense"]
NS_SOURCES = checked(plan.narrative_sense_sources, config)
REGRESSION_SPECS, REGRESSION_SKIPPED = checked(plan.regression_plan, config)
COMPARISON = config["comparison"]
COMPARED = checked(plan.comparison_corpora, config)
STORY_MEASURE_FILES = plan.story_measure_files(config)
VALIDITY_FILES = checked(plan.validity_files, config)
# The last run's validity table in words, for the report's first page (workflow.rst); empty
# before the first run. Not a setting: it changes no job.
config["_validity_summary"] = validity.summary_of("results/validity.csv")
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
    """The corpus CSV: the mirror's copy when a mirror is set (it must be there), else the
    download rule's output."""
    if config["data"]["mirror"]:
        return str(checked(corpora.mirror_file, config, "hippocorpus"))
    return "resources/data/hippocorpus/hippoCorpusV2.csv"


def user_corpus_csv(wildcards):
    return corpus_file(wildcards.corpus)


def user_corpus_columns(wildcards):
    return config["corpora"][wildcards.corpus]["columns"]


def sampled_corpus_csv(wildcards):
    return corpus_file(wildcards.corpus)


def story_sample(wildcards):
    return config["stories"][wildcards.corpus]


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
    absent = [p for p, s in zip(chosen.path, chosen["source"]) if s != p]
    if config["data"]["mirror"] and absent:
        raise StoryflowError(
            f"{len(absent)} book(s) of the sample are not in the data mirror "
            f"({config['data']['mirror']}); looked for: {', '.join(absent[:5])}"
            + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")
            + ". Fix data.mirror, add the files, or set data.mirror to null to download them."
        )
    return chosen


BOOKS = checked(selected_books) if config["books"]["enabled"] else None


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


def corpus_groups(corpus):
    """What a corpus's contrasts can name, read before any job: book genres, CSV groups."""
    if corpus == "books":
        return list(BOOKS["genre"])
    if corpus in config["corpora"]:
        return checked(
            group_values, corpus_file(corpus), config["corpora"][corpus]["columns"]
        )
    return None


for _corpus in CORPORA:
    checked(plan.check_contrasts, config, _corpus, corpus_groups(_corpus))


# --- models and NLL ---------------------------------------------------------------------------


def model_source(wildcards):
    return dict(MODEL_SPECS[wildcards.model].source)


def model_scoring(wildcards):
    """The model's settings that change its scores (storyflow.lm.registry.ModelSpec)."""
    return MODEL_SPECS[wildcards.model].scoring_settings()


def weights_of(name):
    """Input: model ``name``'s GGUF (``gguf``) when it has local weights; nothing when served."""
    return {} if MODEL_SPECS[name].served else {"gguf": f"resources/models/{name}.gguf"}


def model_weights(wildcards):
    return weights_of(wildcards.model)


def nll_settings(wildcards):
    return plan.nll_settings(config, wildcards.corpus)


def per_model_plans(table):
    """Input function: every model's plan table ``table`` (nll_cost, nll_excluded) of a corpus."""

    def paths(wildcards):
        return expand(
            "results/{corpus}/tables/{table}/{model}.csv",
            corpus=wildcards.corpus,
            table=table,
            model=SEQUENTIALITY_MODELS,
        )

    return paths


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
        model=SEQUENTIALITY_MODELS,
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


# --- comparison of measures -----------------------------------------------------------------


def story_measure_files(wildcards):
    """The story-measure tables the enabled measures write for the corpus."""
    return STORY_MEASURE_FILES[wildcards.corpus]


def comparison_contrasts(wildcards):
    return plan.comparison_contrasts(config, wildcards.corpus)


# --- plot holes (workflow/rules/plot_holes.smk) ---------------------------------------------


PH = config["plot_holes"]
PH_CORPORA = checked(plan.plot_hole_corpora, config) if PH["enabled"] else []
PH_DETECTORS = checked(plan.plot_hole_detectors, config) if PH["enabled"] else []
PH_SURPRISAL = checked(plan.plot_hole_surprisal_models, config) if PH["enabled"] else []
PH_MAKERS = checked(plan.plot_hole_makers, config) if PH["enabled"] else []
PH_MAKER_MODEL = checked(plan.plot_hole_maker_model, config) if PH["enabled"] else None
PH_BENCHMARK = checked(plan.plot_hole_benchmark, config) if PH["enabled"] else None
PH_DETECTION = plan.plot_hole_detector_settings(config)
PH_NLI = checked(plan.plot_hole_nli_models, config) if PH["enabled"] else []
PH_POOL_PAIRS = plan.plot_hole_pool_pairs(config)
PH_VALIDITY = "results/plot_holes/validity.csv"


def ph_made(wildcards):
    return expand(
        "results/{corpus}/plot_holes/made/{maker}.parquet",
        corpus=wildcards.corpus,
        maker=PH_MAKERS,
    )


def ph_answers(wildcards):
    return expand(
        "results/{corpus}/plot_holes/answers/{model}.parquet",
        corpus=wildcards.corpus,
        model=PH_DETECTORS,
    )


def ph_surprisal(wildcards):
    return expand(
        "results/{corpus}/plot_holes/surprisal/{model}.parquet",
        corpus=wildcards.corpus,
        model=PH_SURPRISAL,
    )


def ph_nli(wildcards):
    return expand(
        "results/{corpus}/plot_holes/nli/{model}.parquet",
        corpus=wildcards.corpus,
        model=PH_NLI,
    )


def ph_benchmark_file(wildcards):
    return [PH_BENCHMARK] if PH_BENCHMARK else []


def ph_benchmark_answers(wildcards):
    return expand(
        "results/flawedfictions/plot_holes/answers/{model}.parquet", model=PH_DETECTORS
    )


def ph_benchmark_nli(wildcards):
    return expand("results/flawedfictions/plot_holes/nli/{model}.parquet", model=PH_NLI)


def ph_maker_weights(wildcards):
    return weights_of(PH_MAKER_MODEL)


def ph_maker_spec(wildcards):
    return MODEL_SPECS[PH_MAKER_MODEL].scoring_settings()


def ph_maker_settings(wildcards):
    return {
        k: v for k, v in PH["model_maker"].items() if k not in ("model", "verdicts")
    }


def ph_verdicts(wildcards):
    return [PH["model_maker"]["verdicts"]] if PH["model_maker"]["verdicts"] else []


def ph_check_sources():
    """(source, made-story file, {(role, model): file}) of the detectors' validity check: the
    validation pool (when it has pairs) and every plot-hole corpus's controlled pairs.
    """
    out = []
    folders = [("validation", "results/plot_holes/validation")] if PH_POOL_PAIRS else []
    folders += [(c, f"results/{c}/plot_holes") for c in PH_CORPORA]
    for source, folder in folders:
        made = (
            f"{folder}/made.parquet"
            if source == "validation"
            else f"{folder}/made/controlled.parquet"
        )
        files = {("detector", m): f"{folder}/answers/{m}.parquet" for m in PH_DETECTORS}
        files.update({("nli", m): f"{folder}/nli/{m}.parquet" for m in PH_NLI})
        files.update(
            {("surprisal", m): f"{folder}/surprisal/{m}.parquet" for m in PH_SURPRISAL}
        )
        out.append((source, made, files))
    return out


def ph_check_made(wildcards):
    return [made for _, made, _ in ph_check_sources()]


def ph_check_files(wildcards):
    return [f for _, _, files in ph_check_sources() for f in files.values()]


def ph_check_params():
    """The labels of ph_check_made and ph_check_files, in their order."""
    sources = ph_check_sources()
    return {
        "made_sources": [source for source, _, _ in sources],
        "file_labels": [
            [source, role, model]
            for source, _, files in sources
            for role, model in files
        ],
    }


def plot_holes_outputs():
    """The stage's final tables and figures (rule all), when it is enabled."""
    if not PH["enabled"]:
        return []
    outputs = expand(
        [
            "results/{corpus}/plot_holes/scores.csv",
            "results/{corpus}/plot_holes/coverage.csv",
            "results/{corpus}/plot_holes/story_measures.parquet",
            "results/{corpus}/plot_holes/figures/ceeval.png",
            "results/{corpus}/plot_holes/left_out.csv",
        ],
        corpus=PH_CORPORA,
    )
    outputs.append(PH_VALIDITY)
    if "model" in PH_MAKERS:
        outputs += expand(
            "results/{corpus}/plot_holes/review_sheet.csv", corpus=PH_CORPORA
        )
    if "hanna" in PH_CORPORA:
        outputs.append("results/hanna/plot_holes/detection_rates.csv")
    if PH_BENCHMARK:
        outputs.append("results/flawedfictions/plot_holes/scores.csv")
    return outputs


# --- tension (workflow/rules/tension.smk) ----------------------------------------------------

TENSION = checked(plan.tension_plan, config)
TS = config["tension"]
TENSION_EMBEDDING_JUDGE = plan.TENSION_EMBEDDING_JUDGE
# LLM judges (models of `models`), checked on the calibration forecasts by their own rule
TENSION_MODEL_JUDGES = [j for j in TENSION["judges"] if j != TENSION_EMBEDDING_JUDGE]
TENSION_CHECKS = plan.tension_check_settings(config)  # validity thresholds, bootstrap
TENSION_INTERVALS = plan.tension_intervals(config)  # group CIs, min_group_size


def tension_model(wildcards):
    return MODEL_SPECS[wildcards.model].scoring_settings()


def tension_judge(wildcards):
    return plan.tension_judge_settings(config, wildcards.judge)


def tension_judge_model(wildcards):
    """The LLM judge's model settings ({} for the embedding judge)."""
    if wildcards.judge in MODEL_SPECS:
        return MODEL_SPECS[wildcards.judge].scoring_settings()
    return {}


def tension_judge_inputs(wildcards):
    """The forecaster's calibration table (embedding judge without a fixed threshold) or the
    LLM judge's GGUF (none for a served judge)."""
    if wildcards.judge in MODEL_SPECS:
        return weights_of(wildcards.judge)
    if TS["embedding"]["threshold"] is None:
        return {"calibration": f"results/tension/calibration/{wildcards.model}.csv"}
    return {}


def tension_judge_weights(wildcards):
    """The LLM judge's GGUF (none for a served judge)."""
    return weights_of(wildcards.judge)


def tension_calibration_judgments(wildcards):
    """Every LLM judge's verdicts on the forecaster's held-out calibration forecasts."""
    return expand(
        "results/tension/calibration/judgments/{model}/{judge}.parquet",
        model=wildcards.model,
        judge=TENSION_MODEL_JUDGES,
    )


def tension_validity_files(wildcards):
    """The validity checks of every forecaster (and of the judges on its forecasts)."""
    return expand("results/tension/validity/{model}.csv", model=TENSION["forecasters"])


def tension_scores(wildcards):
    return expand(
        "results/{corpus}/tension/stories/{model}/{judge}.parquet",
        corpus=wildcards.corpus,
        model=TENSION["forecasters"],
        judge=TENSION["judges"],
    )


def tension_pmi(wildcards):
    return expand(
        "results/{corpus}/tension/pmi/{model}.parquet",
        corpus=wildcards.corpus,
        model=TENSION["pmi_models"],
    )


def tension_contrasts(wildcards):
    """Unpaired contrasts of a corpus without prompt pairs (HANNA is paired by prompt)."""
    if wildcards.corpus in SAMPLED_CORPORA:
        return []
    return plan.contrasts(config, wildcards.corpus)


def tension_marked_angle(wildcards):
    """The vertex-angle threshold whose reversals the example curves mark (the middle one)."""
    angles = sorted(TS["curves"]["angles"])
    return angles[len(angles) // 2]


def tension_outputs():
    """The tension stage's final tables, calibration and validity tables and figures (when it
    is enabled)."""
    if not TENSION["corpora"]:
        return []
    per_corpus = expand(
        [
            "results/{corpus}/tension/group_means.csv",
            "results/{corpus}/tension/effects.csv",
            "results/{corpus}/tension/likelihood_vs_sampled.csv",
            "results/{corpus}/tension/story_measures.parquet",
            "results/{corpus}/figures/tension_by_group.png",
            "results/{corpus}/figures/tension_inflection_rates.png",
        ],
        corpus=TENSION["corpora"],
    )
    curves = expand(
        "results/{corpus}/figures/tension_curves/{model}/{judge}.png",
        corpus=TENSION["corpora"],
        model=TENSION["forecasters"],
        judge=TENSION["judges"],
    )
    calibration = expand(
        [
            "results/tension/calibration/{model}.csv",
            "results/tension/validity/{model}.csv",
        ],
        model=TENSION["forecasters"],
    )
    return per_corpus + curves + calibration


# --- final products ---------------------------------------------------------------------------


# ---- cost of the language-model stages (cost.smk)

LM_COST_SETTINGS = checked(plan.lm_cost_settings, config)
LM_COST_CORPORA = list(LM_COST_SETTINGS)


def final_outputs():
    """Every final table and figure the config asks for (rule all)."""
    outputs = expand(
        [
            "results/{corpus}/tables/sample_counts.csv",
            "results/{corpus}/tables/nll_estimate.csv",
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
    outputs += fabula_entropy_outputs()
    outputs += expand(
        [
            "results/{corpus}/measures.parquet",
            "results/{corpus}/tables/measure_correlations.csv",
            "results/{corpus}/tables/model_agreement.csv",
            "results/{corpus}/tables/measure_separation.csv",
            "results/{corpus}/figures/measure_correlations.png",
            "results/{corpus}/figures/measure_separation.png",
        ],
        corpus=COMPARED,
    )
    outputs += plot_holes_outputs()
    outputs += tension_outputs()
    outputs.append("results/validity.csv")
    if LM_COST_CORPORA:
        outputs.append("results/lm_cost.csv")
    return outputs
