"""Sequentiality (docs/sequentiality.md): its models, corpora, NLL settings, regressions and
result paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.roles as roles
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout

#: ``results/<corpus>/sequentiality/``
OUT = Layout("sequentiality")


def models(config: Mapping[str, Any]) -> list[str]:
    """The models that score NLLs for sequentiality: those with the role ``sequentiality``."""
    chosen = roles.models_with_role(config, "sequentiality")
    if not chosen:
        raise StoryflowError(
            "config: no model has the role sequentiality (models[].roles), so nothing scores "
            "the NLLs of the sequentiality analysis; add sequentiality to a local model's roles"
        )
    return chosen


def corpora(config: Mapping[str, Any]) -> list[str]:
    """Corpora of the sequentiality analysis: HIPPOCORPUS, books (when on), the user's CSVs."""
    books = ["books"] if config["books"]["enabled"] else []
    return ["hippocorpus", *books, *config["corpora"]]


#: NLL settings that change no score: how the work is split, the rate of the time estimate.
NOT_SCORES = ("shards", "tokens_per_second")


def nll_settings(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """The NLL settings that change a corpus's scores (not :data:`NOT_SCORES`).

    Books have no topic: their formulations come from ``books.formulations``.
    """
    settings = {k: v for k, v in config["nll"].items() if k not in NOT_SCORES}
    if corpus == "books":
        settings["formulations"] = config["books"]["formulations"]
    return settings


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
    chosen = roles.role_models(
        config, "regression.models", config["regression"]["models"], "sequentiality"
    )
    outside = [name for name in chosen if name not in every]
    if outside:
        raise StoryflowError(
            f"config: regression.models names {', '.join(outside)}, which score(s) no "
            f"sequentiality NLLs; name models with the role sequentiality ({', '.join(every)})"
        )
    return [name for name in every if name in chosen]


def regression_corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora whose covariates and regressions are computed (``regression.corpora``; none
    when the regressions are off); each must be a corpus of the analysis (:func:`corpora`)."""
    if not config["regression"]["enabled"]:
        return []
    analysed = corpora(config)
    chosen = list(config["regression"]["corpora"])
    unknown = [c for c in chosen if c not in analysed]
    if unknown:
        raise StoryflowError(
            f"config: regression.corpora names {', '.join(unknown)}, not a corpus of the "
            f"sequentiality analysis ({', '.join(analysed)}; books needs books.enabled)"
        )
    return chosen


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The analysis's final tables and figures (rule all): per corpus the NLL estimate, the
    sequentiality by type and by contrast and their figures; the HIPPOCORPUS covariates when
    they are on, and the covariates and regressions of each corpus of ``regression.corpora``
    when the regressions are on."""
    outputs = [
        OUT.of(c, *parts)
        for c in corpora(config)
        for parts in (
            ("tables", "nll_estimate.csv"),
            ("tables", "sequentiality_by_type.csv"),
            ("tables", "effect_sizes.csv"),
            ("tables", "contrast_summary.csv"),
            ("figures", "sequentiality_by_history.png"),
            ("figures", "sequentiality_by_contrast.png"),
            ("figures", "effect_sizes.png"),
        )
    ]
    fitted = regression_corpora(config) if regressions(config)[0] else []
    if config["covariates"]["enabled"]:
        covariate_corpora = ["hippocorpus", *(c for c in fitted if c != "hippocorpus")]
        outputs += [OUT.of(c, "covariates.parquet") for c in covariate_corpora]
    for corpus in fitted:
        outputs += [
            OUT.of(corpus, "tables", "regression_coefficients.csv"),
            OUT.of(corpus, "tables", "regression_diagnostics.csv"),
            OUT.of(corpus, "figures", "regression_coefficients.png"),
        ]
    return outputs
