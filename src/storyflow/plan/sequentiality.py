"""Sequentiality (docs/sequentiality.md): its models, corpora, NLL settings, regressions and
result paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.corpus_files as corpus_files
import storyflow.plan.narrative_sense as narrative_sense
import storyflow.plan.roles as roles
from storyflow.errors import StoryflowError
from storyflow.lm.rates import model_rates
from storyflow.lm.specs import ModelSpec
from storyflow.measures.sequentiality.covariates.connectives import default_lexicon_path
from storyflow.plan.layout import Layout, each_corpus, fill

#: ``results/<corpus>/sequentiality/``
OUT = Layout("sequentiality")

#: The models it uses: scorers of the sentences' NLLs (the role is the measure's name), of
#: which ``regression.models`` chooses those whose sentences enter the regressions.
SCORER_ROLE = roles.Role("sequentiality", scores_text=True)
REGRESSED_ROLE = roles.Role(SCORER_ROLE.name, ("regression", "models"), scores_text=True)
ROLES = (SCORER_ROLE,)

# --- the files, each named once (wildcards: {corpus}, {model}, {shard}, {spec})
#: Each model's NLL plan: planned passes and tokens per story (:data:`storyflow.tables.NLL_COST`).
NLL_COST = OUT.table("nll_cost/{model}.csv")
#: Stories each model does not score, and why (:data:`storyflow.tables.NLL_EXCLUDED`).
NLL_EXCLUDED = OUT.table("nll_excluded/{model}.csv")
#: Every model's planned tokens and expected time.
NLL_ESTIMATE = OUT.table("nll_estimate.csv")
#: One shard's NLL terms (:data:`storyflow.tables.NLL`).
NLL_SHARD = OUT("nll/{model}/shard-{shard}.parquet")
#: A model's NLL terms, its shards gathered (:data:`storyflow.tables.NLL`).
NLL = OUT("nll/{model}.parquet")
#: Sentence and story sequentiality of a model.
SENTENCE_SCORES = OUT("scores/{model}/sentences.parquet")
STORY_SCORES = OUT("scores/{model}/stories.parquet")
#: The same two tables as CSV, for a reader (:data:`storyflow.tables.SENTENCE_SEQUENTIALITY`,
#: :data:`storyflow.tables.STORY_SEQUENTIALITY`).
SENTENCE_SCORES_CSV = OUT.table("scores/{model}/sentences.csv")
STORY_SCORES_CSV = OUT.table("scores/{model}/stories.csv")
#: The measure's story measures, which the comparison reads
#: (:data:`storyflow.tables.STORY_MEASURES`).
STORY_MEASURES = OUT("story_measures.parquet")
#: Sequentiality per story type, history and formulation.
BY_TYPE = OUT.table("sequentiality_by_type.csv")
#: Hedges' g and Welch's t per contrast (:data:`storyflow.tables.EFFECTS`), and their summary.
EFFECT_SIZES = OUT.table("effect_sizes.csv")
CONTRAST_SUMMARY = OUT.table("contrast_summary.csv")
BY_HISTORY_FIGURE = OUT.figure("sequentiality_by_history")
BY_CONTRAST_FIGURE = OUT.figure("sequentiality_by_contrast")
EFFECT_SIZES_FIGURE = OUT.figure("effect_sizes")
#: Sentence-level coherence covariates.
COVARIATES = OUT("covariates.parquet")
#: The regressions: coefficients of every specification, one table per specification, the fits'
#: diagnostics, and the coefficients' figure.
REGRESSION_COEFFICIENTS = OUT.table("regression_coefficients.csv")
REGRESSION_TABLE = OUT.table("regression_{spec}.csv")
REGRESSION_DIAGNOSTICS = OUT.table("regression_diagnostics.csv")
REGRESSION_FIGURE = OUT.figure("regression_coefficients")


def packaged_connectives() -> str:
    """The connective lexicon packaged with the library (the covariates' default): read from
    the installed package, never from a checkout's folder, so the rules work as a module."""
    return str(default_lexicon_path())


def enabled(config: Mapping[str, Any]) -> bool:
    """Sequentiality always runs: it is the workflow's core."""
    del config
    return True


def shards(config: Mapping[str, Any]) -> list[str]:
    """The NLL shards' names (``000``, ``001``, ...; ``nll.shards`` of them)."""
    return [f"{k:03d}" for k in range(config["nll"]["shards"])]


def models(config: Mapping[str, Any]) -> list[str]:
    """The models that score NLLs for sequentiality: those with the role ``sequentiality``."""
    chosen = SCORER_ROLE.models(config)
    if not chosen:
        raise StoryflowError(
            f"config: no model has the role {SCORER_ROLE.name} (models[].roles), so nothing "
            "scores the NLLs of the sequentiality analysis; add "
            f"{SCORER_ROLE.name} to a local model's roles"
        )
    return chosen


def available_corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora sequentiality can read: HIPPOCORPUS, books (when ``books.enabled``) and the
    user's CSV corpora (``corpora``), in that order: also the default of
    ``sequentiality.corpora``."""
    books = ["books"] if config["books"]["enabled"] else []
    return ["hippocorpus", *books, *config["corpora"]]


def corpora(config: Mapping[str, Any]) -> list[str]:
    """Corpora of the sequentiality analysis: ``sequentiality.corpora`` in its order, or (null,
    the default) every corpus it can read (:func:`available_corpora`).

    Raises:
        StoryflowError: the list names a corpus sequentiality cannot read (a misspelt name,
            the books while ``books.enabled`` is off, HANNA or ROCStories).
    """
    available = available_corpora(config)
    chosen = config.get("sequentiality", {}).get("corpora")
    if chosen is None:
        return available
    unknown = [c for c in chosen if c not in available]
    if unknown:
        raise StoryflowError(
            f"config: sequentiality.corpora names {', '.join(repr(c) for c in unknown)}, which "
            f"sequentiality cannot read; name corpora among {', '.join(available)} (books needs "
            "books.enabled; a corpus of your own is declared under corpora)"
        )
    return list(chosen)


#: NLL settings that change no score: how the work is split, the rate of the time estimate.
NOT_SCORES = ("shards", "tokens_per_second")


def nll_settings(
    config: Mapping[str, Any], corpus: str, model: ModelSpec | None = None
) -> dict[str, Any]:
    """The NLL settings that change a corpus's scores (not :data:`NOT_SCORES`) under ``model``:
    its ``device.n_gpu_layers`` (0 without a model), which also sets the device's batching
    defaults.

    Books have no topic: their formulations come from ``books.formulations``.
    """
    settings = {k: v for k, v in config["nll"].items() if k not in NOT_SCORES}
    settings["n_gpu_layers"] = model.n_gpu_layers if model is not None else 0
    if corpus == "books":
        settings["formulations"] = config["books"]["formulations"]
    return settings


def covariate_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the coherence covariates depend on (``covariates``, its connective lexicon apart:
    an input file)."""
    keys = ("embedding_model", "windows", "zipf_threshold", "relation_classifier", "agent_resolver")
    return {k: config["covariates"][k] for k in keys}


def connectives(config: Mapping[str, Any]) -> str | None:
    """The user's connective lexicon (``covariates.connectives``; None: the packaged one)."""
    return config["covariates"]["connectives"]


def regression_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the regression fits depend on beyond their inputs: the ``formulation`` modelled and
    the ``fdr_alpha`` of ``significant_fdr`` (``regression``)."""
    return {k: config["regression"][k] for k in ("formulation", "fdr_alpha")}


def nll_throughput(config: Mapping[str, Any]) -> dict[str, Any]:
    """The NLL stage's settings that change no score: ``tokens_per_second``, the estimate's rate
    of each scoring model that has one (by name: its NLL rate,
    :func:`storyflow.lm.rates.model_rates`) and the ``shards`` per corpus and model (``nll``)."""
    rates = model_rates(config, models(config))
    return {
        "tokens_per_second": {
            name: rate.nll.tokens_per_second for name, rate in rates.items() if rate.nll
        },
        "shards": config["nll"]["shards"],
    }


def regressions(config: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """Regression specifications to fit (``gain_h1`` ...) and those skipped, with the reason."""
    if not config["regression"]["enabled"]:
        return [], {}
    reg, nll = config["regression"], config["nll"]
    if not config["covariates"]["enabled"]:
        raise StoryflowError("config: regression.enabled needs covariates.enabled")
    if reg["formulation"] not in nll["formulations"]:
        raise StoryflowError(
            f"config: regression.formulation {reg['formulation']!r} is not in nll.formulations"
        )
    fitted, skipped = [], {}
    for history in reg["histories"]:
        if int(history) not in config["covariates"]["windows"]:
            raise StoryflowError(
                f"config: regression history {history} needs covariate window {history} "
                "(covariates.windows)"
            )
        for kind in reg["kinds"]:
            if int(history) <= nll["max_history"]:
                fitted.append(f"{kind}_h{history}")
            else:
                skipped[f"{kind}_h{history}"] = (
                    f"history {history} not scored (nll.max_history = {nll['max_history']})"
                )
    if not fitted:
        raise StoryflowError("config: no regression history is scored (see nll.max_history)")
    return fitted, skipped


def regression_models(config: Mapping[str, Any]) -> list[str]:
    """The models whose sentences enter the regressions: ``regression.models``, or (null) every
    model with the role sequentiality (:func:`models`), in config order."""
    every = models(config)
    chosen = REGRESSED_ROLE.models(config)
    outside = [name for name in chosen if name not in every]
    if outside:
        raise StoryflowError(
            f"config: regression.models names {', '.join(outside)}, which score(s) no "
            f"sequentiality NLLs; name models with the role sequentiality ({', '.join(every)})"
        )
    return [name for name in every if name in chosen]


def regression_corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora whose covariates and regressions are computed (``regression.corpora``; none
    when the regressions are off); each must be a corpus of the analysis (:func:`corpora`).
    Null (the default): HIPPOCORPUS when it is analysed, else none."""
    if not config["regression"]["enabled"]:
        return []
    analysed = corpora(config)
    named = config["regression"]["corpora"]
    if named is None:
        return ["hippocorpus"] if "hippocorpus" in analysed else []
    chosen = list(named)
    unknown = [c for c in chosen if c not in analysed]
    if unknown:
        raise StoryflowError(
            f"config: regression.corpora names {', '.join(unknown)}, not a corpus of the "
            f"sequentiality analysis ({', '.join(analysed)}; sequentiality.corpora, books "
            "needs books.enabled); remove it from regression.corpora or add it to "
            "sequentiality.corpora"
        )
    return chosen


def covariate_corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora whose coherence covariates are computed when ``covariates.enabled``:
    HIPPOCORPUS when it is analysed, and every corpus of the regressions
    (:func:`regression_corpora`, when a specification is fitted); [] when they are off."""
    if not config["covariates"]["enabled"]:
        return []
    fitted = regression_corpora(config) if regressions(config)[0] else []
    first = ["hippocorpus"] if "hippocorpus" in corpora(config) else []
    return list(dict.fromkeys([*first, *fitted]))


def narrative_sense_covariate(config: Mapping[str, Any], corpus: str) -> list[str]:
    """The corpus's narrative-sense story scores, a story-level regression covariate when the
    narrative-sense stage scores the corpus and ``regression.narrative_sense`` is on; else []."""
    if config["regression"]["narrative_sense"] and corpus in narrative_sense.corpora(config):
        return [fill(narrative_sense.STORY_SCORES, corpus=corpus)]
    return []


def validity_tables(config: Mapping[str, Any]) -> list[str]:
    """None of its own: its contrasts' group sizes are checked on :data:`EFFECT_SIZES` when the
    validity table is gathered
    (:func:`storyflow.measures.sequentiality.validity.contrast_checks`)."""
    del config
    return []


def cost_settings(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Nothing for the language-model cost estimate: the NLL stage has its own plan and
    estimate (:data:`NLL_ESTIMATE`)."""
    del config
    return {}


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The analysis's final tables and figures (rule all): per corpus the NLL estimate, the
    sequentiality by type and by contrast and their figures, and each model's sentence and
    story scores as CSV; the covariates of :func:`covariate_corpora` when they are on, and
    the regressions of each corpus of ``regression.corpora`` when the regressions are on."""
    outputs = each_corpus(
        corpora(config),
        NLL_ESTIMATE,
        BY_TYPE,
        EFFECT_SIZES,
        CONTRAST_SUMMARY,
        BY_HISTORY_FIGURE.png,
        BY_CONTRAST_FIGURE.png,
        EFFECT_SIZES_FIGURE.png,
    )
    outputs += [
        fill(path, corpus=c, model=m)
        for c in corpora(config)
        for m in models(config)
        for path in (SENTENCE_SCORES_CSV, STORY_SCORES_CSV)
    ]
    fitted = regression_corpora(config) if regressions(config)[0] else []
    outputs += each_corpus(covariate_corpora(config), COVARIATES)
    outputs += each_corpus(
        fitted, REGRESSION_COEFFICIENTS, REGRESSION_DIAGNOSTICS, REGRESSION_FIGURE.png
    )
    return outputs


# --- the paper it replicates (Fiction Flows: storyflow.replication.papers.FICTION_FLOWS)

#: The corpora of the paper's that sequentiality can read.
PAPER_CORPORA = ("hippocorpus", "books")


def paper_corpus(config: Mapping[str, Any]) -> bool:
    """Whether it reads HIPPOCORPUS or the books."""
    return bool(set(PAPER_CORPORA) & set(corpora(config)))


#: The paper corpora whose sample counts are stories per story type (the population a
#: verdict's "to decide" is capped at); the books' count books and passages per genre.
STORY_COUNTED = ("hippocorpus",)


def paper_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The files Fiction Flows' comparison reads, by name: per corpus of the paper's, each
    model's story scores, the stories' labels, their counts in the corpus and the NLL plans;
    HIPPOCORPUS's regression coefficients when they are fitted."""
    inputs: dict[str, list[str]] = {}
    for corpus in PAPER_CORPORA:
        if corpus not in corpora(config):
            continue
        inputs[corpus] = [fill(STORY_SCORES, corpus=corpus, model=m) for m in models(config)]
        inputs[f"{corpus}_labels"] = [fill(corpus_files.STORIES, corpus=corpus)]
        if corpus in STORY_COUNTED:
            inputs[f"{corpus}_counts"] = [fill(corpus_files.SAMPLE_COUNTS, corpus=corpus)]
        inputs[f"{corpus}_nll_cost"] = [
            fill(NLL_COST, corpus=corpus, model=m) for m in models(config)
        ]
    if regressions(config)[0] and "hippocorpus" in regression_corpora(config):
        inputs["regression"] = [fill(REGRESSION_COEFFICIENTS, corpus="hippocorpus")]
    return inputs


def paper_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What Fiction Flows' comparison depends on of this measure's settings: the
    ``min_sentences`` of a story kept and each paper corpus's ``contrasts``."""
    return {
        "min_sentences": config["stats"]["min_sentences"],
        "contrasts": {c: config[c]["contrasts"] for c in PAPER_CORPORA if c in corpora(config)},
    }
