"""Tension (docs/tension.md): corpora, forecasters, judges, the settings each job depends on,
and the result paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.roles as roles
from storyflow.corpora import corpus_kind
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout

#: ``results/<corpus>/tension/``; the calibration and validity checks in ``results/tension/``
OUT = Layout("tension")

EMBEDDING_JUDGE = "embedding"


def choices(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The tension stage's corpora, forecasters, judges and PMI models (each list null in the
    config: the models with the role), checked against the model registry (the
    settings' ranges are the schema's); empty lists when the stage is off."""
    tension = config["tension"]
    if not tension["enabled"]:
        return {"corpora": [], "forecasters": [], "judges": [], "pmi_models": []}
    forecasters = roles.role_models(
        config, "tension.forecasters", tension["forecasters"], "tension.forecaster"
    )
    if not forecasters:
        raise StoryflowError(
            "config: tension is enabled but no model forecasts endings: give a model the role "
            "tension.forecaster (models[].roles) or name one in tension.forecasters"
        )
    named = tension["judges"]
    if named is None:
        judges = [EMBEDDING_JUDGE, *roles.models_with_role(config, "tension.judge")]
    else:
        models = [j for j in named if j != EMBEDDING_JUDGE]
        roles.role_models(config, "tension.judges", models, "tension.judge")
        judges = list(named)
    for corpus in tension["corpora"]:
        corpus_kind(config, corpus)
    return {
        "corpora": list(tension["corpora"]),
        "forecasters": forecasters,
        "judges": judges,
        "pmi_models": roles.role_models(
            config, "tension.pmi.models", tension["pmi"]["models"], "tension.pmi"
        ),
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
    :class:`storyflow.measures.tension.validity.CheckSettings`): interval level
    (``stats.confidence``), bootstrap resamples and seed, and the forecaster's and the judge's
    thresholds (``validity.*``); other validity keys re-run nothing here."""
    checks = config["validity"]
    return {
        "confidence": config["stats"]["confidence"],
        "resamples": checks["bootstrap"],
        "seed": checks["seed"],
        "min_pairwise": checks["forecaster"]["min_pairwise"],
        "min_balanced_accuracy": checks["judge"]["min_balanced_accuracy"],
        "min_judge_pairwise": checks["judge"]["min_pairwise"],
    }


def intervals(config: Mapping[str, Any]) -> dict[str, Any]:
    """How the tension group means and contrasts.contrasts are summarised (a rule's ``params``;
    :class:`storyflow.measures.tension.compare.Intervals`): ``tension.confidence``, the
    bootstrap resamples and seed and ``min_group_size`` of ``validity``."""
    checks = config["validity"]
    return {
        "confidence": config["tension"]["confidence"],
        "resamples": checks["bootstrap"],
        "seed": checks["seed"],
        "min_group_size": checks["min_group_size"],
    }


def validity_tables(config: Mapping[str, Any]) -> list[str]:
    """The forecasters' validity tables (:data:`storyflow.tables.VALIDITY`), one per forecaster."""
    return [OUT.shared_table("validity", f"{m}.csv") for m in choices(config)["forecasters"]]


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The stage's final tables, calibration and validity tables and figures (rule all); []
    when it is off."""
    chosen = choices(config)
    outputs = [
        OUT.of(c, *parts)
        for c in chosen["corpora"]
        for parts in (
            ("tables", "group_means.csv"),
            ("tables", "effects.csv"),
            ("tables", "likelihood_vs_sampled.csv"),
            ("story_measures.parquet",),
            ("figures", "by_group.png"),
            ("figures", "inflection_rates.png"),
        )
    ]
    outputs += [
        OUT.of(c, "figures", "curves", m, f"{j}.png")
        for c in chosen["corpora"]
        for m in chosen["forecasters"]
        for j in chosen["judges"]
    ]
    if chosen["corpora"]:
        outputs += [OUT.shared_table("calibration", f"{m}.csv") for m in chosen["forecasters"]]
        outputs += validity_tables(config)
    return outputs
