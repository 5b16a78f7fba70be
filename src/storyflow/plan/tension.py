"""Tension (docs/tension.md): corpora, forecasters, judges, the settings each job depends on,
and the result paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.contrasts as contrasts
import storyflow.plan.roles as roles
from storyflow.corpora import corpus_kind
from storyflow.corpora.selection import SAMPLED
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout, each_corpus, fill
from storyflow.plan.statistics import settings as shared_statistics

#: ``results/<corpus>/tension/``; the calibration and validity checks in ``results/tension/``
OUT = Layout("tension")

#: The models it uses: forecasters of endings, LLM judges of them, the PMI baseline's scorers.
FORECASTER_ROLE = roles.Role("tension.forecaster", ("tension", "forecasters"))
JUDGE_ROLE = roles.Role("tension.judge", ("tension", "judges"))
PMI_ROLE = roles.Role("tension.pmi", ("tension", "pmi", "models"), scores_text=True)
ROLES = (FORECASTER_ROLE, JUDGE_ROLE, PMI_ROLE)

# --- the files, each named once (wildcards: {corpus}, {model} the forecaster, {judge})
#: Where each story is cut, and the stories left out.
CUTS = OUT("cuts/{model}.parquet")
CUTS_EXCLUDED = OUT.table("excluded/{model}.csv")
#: The K endings sampled at every cut.
ENDINGS = OUT("endings/{model}.parquet")
#: The corpus the forecasters' validity checks and the embedding judge's calibration read (its
#: stories table; their files below).
CALIBRATION_CORPUS = "rocstories"
#: The forecaster's ROCStories forecasts, the embedding judge's calibration on them (table and
#: cosines), each LLM judge's verdicts on them, and the forecaster's validity table.
CALIBRATION_ENDINGS = OUT.shared("calibration/endings/{model}.parquet")
CALIBRATION = OUT.shared_table("calibration/{model}.csv")
CALIBRATION_COSINES = OUT.shared("calibration/cosines/{model}.parquet")
CALIBRATION_JUDGMENTS = OUT.shared("calibration/judgments/{model}/{judge}.parquet")
VALIDITY = OUT.shared_table("validity/{model}.csv")
#: One judge's verdicts on one forecaster's endings, the no-rate curves and the story scores.
JUDGMENTS = OUT("judgments/{model}/{judge}.parquet")
CURVES = OUT("curves/{model}/{judge}.parquet")
STORY_SCORES = OUT("stories/{model}/{judge}.parquet")
#: The PMI companion of a model.
PMI = OUT("pmi/{model}.parquet")
#: Group means, contrasts, likelihood against sampling, and the story measures.
GROUP_MEANS = OUT.table("group_means.csv")
EFFECTS = OUT.table("effects.csv")
LIKELIHOOD_VS_SAMPLED = OUT.table("likelihood_vs_sampled.csv")
STORY_MEASURES = OUT("story_measures.parquet")
BY_GROUP_FIGURE = OUT.figure("by_group")
CURVES_FIGURE = OUT.figure("curves/{model}/{judge}")
INFLECTION_RATES_FIGURE = OUT.figure("inflection_rates")

EMBEDDING_JUDGE = "embedding"


def enabled(config: Mapping[str, Any]) -> bool:
    return bool(config["tension"]["enabled"])


def corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora whose stories get tension scores ([] when the stage is off)."""
    return models_and_corpora(config)["corpora"]


def models_and_corpora(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The tension stage's corpora, forecasters, judges and PMI models (each list null in the
    config: the models with the role), checked against the model registry (the
    settings' ranges are the schema's); empty lists when the stage is off."""
    tension = config["tension"]
    if not tension["enabled"]:
        return {"corpora": [], "forecasters": [], "judges": [], "pmi_models": []}
    forecasters = FORECASTER_ROLE.models(config)
    if not forecasters:
        raise StoryflowError(
            f"config: tension is enabled but no model forecasts endings: give a model the role "
            f"{FORECASTER_ROLE.name} (models[].roles) or name one in {FORECASTER_ROLE.setting}"
        )
    named = JUDGE_ROLE.named(config)
    if named is None:
        judges = [EMBEDDING_JUDGE, *roles.models_with_role(config, JUDGE_ROLE)]
    else:
        models = [j for j in named if j != EMBEDDING_JUDGE]
        roles.role_models(config, JUDGE_ROLE.setting, models, JUDGE_ROLE)
        judges = list(named)
    for corpus in tension["corpora"]:
        corpus_kind(config, corpus)
    return {
        "corpora": list(tension["corpora"]),
        "forecasters": forecasters,
        "judges": judges,
        "pmi_models": PMI_ROLE.models(config),
    }


def settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the tension jobs depend on, each under the name its rules' params use: the cuts,
    K and the sampling settings and prompts (the forecasters'), the embedding judge's
    calibration (stories, model, chunk words, seed, fixed threshold or null), the curves and
    the angle whose reversals the example curves mark (the middle one) and the validity checks
    (:func:`check_settings`); the summary's: :func:`summary_settings`."""
    tension = config["tension"]
    embedding = tension["embedding"]
    angles = sorted(tension["curves"]["angles"])
    return {
        "cuts": tension["cuts"],
        "k": tension["k"],
        "sampling": tension["sampling"],
        "prompts": tension["prompts"],
        "calibration_stories": embedding["calibration_stories"],
        "embedding_model": embedding["model"],
        "chunk_words": embedding["chunk_words"],
        "calibration_seed": embedding["seed"],
        "threshold": embedding["threshold"],
        "curves": tension["curves"],
        "smoothing": tension["curves"]["smoothing"],
        "marked_angle": angles[len(angles) // 2],
        "checks": check_settings(config),
    }


def judge_settings(config: Mapping[str, Any], judge: str) -> dict[str, Any]:
    """The settings one judge's verdicts depend on (a rule's ``params``: changing the LLM
    judge's prompt re-runs that judge only, never the sampling)."""
    tension = config["tension"]
    if judge == EMBEDDING_JUDGE:
        return {"kind": "embedding", **tension["embedding"]}
    return {"kind": "llm", "model": judge, **tension["llm_judge"]}


def check_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of the tension validity checks (a rule's ``params``;
    :class:`storyflow.measures.tension.validity.CheckSettings`): the interval level, the
    bootstrap resamples and seed (:mod:`storyflow.plan.statistics`), and the forecaster's and
    the judge's thresholds (``validity.*``); other validity keys re-run nothing here."""
    checks = config["validity"]
    return {
        **shared_statistics(config, "confidence", "resamples", "seed"),
        "min_pairwise": checks["forecaster"]["min_pairwise"],
        "min_balanced_accuracy": checks["judge"]["min_balanced_accuracy"],
        "min_judge_pairwise": checks["judge"]["min_pairwise"],
    }


def intervals(config: Mapping[str, Any]) -> dict[str, Any]:
    """How the tension group means and contrasts.contrasts are summarised (a rule's ``params``;
    :class:`storyflow.bootstrap.Statistics`): the level ``stats.confidence``,
    and the bootstrap resamples and seed and the smallest group of the shared statistics
    settings (:mod:`storyflow.plan.statistics`)."""
    return shared_statistics(config, "confidence", "resamples", "seed", "min_group_size")


def summary_settings(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """What a corpus's tension summary depends on (rule ``summarize_tension``'s params;
    :class:`storyflow.measures.tension.compare.SummarySettings`): K, the group intervals
    (:func:`intervals`), the corpus's contrasts (none for a sampled corpus: HANNA is paired by
    prompt), and the forecasters, judges and PMI models of the story measures."""
    chosen = models_and_corpora(config)
    return {
        "k": config["tension"]["k"],
        "intervals": intervals(config),
        "contrasts": [] if corpus in SAMPLED else contrasts.contrasts(config, corpus),
        "forecasters": chosen["forecasters"],
        "judges": chosen["judges"],
        "pmi_models": chosen["pmi_models"],
    }


def validity_tables(config: Mapping[str, Any]) -> list[str]:
    """The forecasters' validity tables (:data:`storyflow.tables.VALIDITY`), one per forecaster."""
    return [fill(VALIDITY, model=m) for m in models_and_corpora(config)["forecasters"]]


def cost_settings(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per corpus, what its forecasts and judgments will cost depends on: K, the sampling and
    the cuts, and the forecasters and judges (:mod:`storyflow.estimate`)."""
    chosen = models_and_corpora(config)
    block = {k: config["tension"][k] for k in ("k", "sampling", "cuts")}
    models = {k: chosen[k] for k in ("forecasters", "judges")}
    return {corpus: {"block": block, "plan": models} for corpus in chosen["corpora"]}


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The stage's final tables, calibration and validity tables and figures (rule all); []
    when it is off."""
    chosen = models_and_corpora(config)
    outputs = each_corpus(
        chosen["corpora"],
        GROUP_MEANS,
        EFFECTS,
        LIKELIHOOD_VS_SAMPLED,
        STORY_MEASURES,
        BY_GROUP_FIGURE.png,
        INFLECTION_RATES_FIGURE.png,
    )
    outputs += [
        CURVES_FIGURE.of(corpus=c, model=m, judge=j).png
        for c in chosen["corpora"]
        for m in chosen["forecasters"]
        for j in chosen["judges"]
    ]
    if chosen["corpora"]:
        outputs += [fill(CALIBRATION, model=m) for m in chosen["forecasters"]]
        outputs += validity_tables(config)
    return outputs


# --- the paper it replicates (100-Endings: storyflow.replication.papers.HUNDRED_ENDINGS)


def paper_corpus(config: Mapping[str, Any]) -> bool:
    """Whether it scores HANNA, the paper's corpus."""
    return "hanna" in corpora(config)


def paper_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The files 100-Endings' comparison reads: HANNA's effects."""
    return {"hanna_effects": [fill(EFFECTS, corpus="hanna")]} if paper_corpus(config) else {}


def paper_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """None of its own beyond the replication's."""
    return {}
