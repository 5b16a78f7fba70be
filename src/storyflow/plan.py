"""What the workflow runs, decided from the validated config alone (no data read).

The Snakefile calls these at parse time, so a config mistake they can see stops the run before
the first job, with one message naming the key. They are plain functions of the config mapping,
tested without Snakemake.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from storyflow import corpora
from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)


def sequentiality_corpora(config: Mapping[str, Any]) -> list[str]:
    """Corpora of the sequentiality analysis: HIPPOCORPUS, books (when on), the user's CSVs."""
    books = ["books"] if config["books"]["enabled"] else []
    return ["hippocorpus", *books, *(config.get("corpora") or {})]


def nll_settings(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """The NLL settings that change a corpus's scores (``shards`` only splits the work).

    Books have no topic: their formulations come from ``books.formulations``.
    """
    settings = {key: value for key, value in config["nll"].items() if key != "shards"}
    if corpus == "books":
        settings["formulations"] = config["books"]["formulations"]
    return settings


def contrasts(config: Mapping[str, Any], corpus: str) -> list[Mapping[str, Any]]:
    """The contrasts declared for ``corpus`` (its own block, or its ``corpora:`` entry)."""
    user = config.get("corpora") or {}
    return list(user[corpus]["contrasts"] if corpus in user else config[corpus]["contrasts"])


def regression_plan(config: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
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


def narrative_sense_sources(config: Mapping[str, Any]) -> list[str]:
    """Every corpus the narrative-sense stage reads (reference and targets), each one known."""
    ns = config["narrative_sense"]
    sources = sorted(set(ns["reference"]) | set(ns["targets"]))
    for source in sources:
        corpora.corpus_kind(config, source)
    return sources


def narrative_sense_settings(config: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Only the settings that change ``source``'s lemma table (so reruns are precise)."""
    ns = config["narrative_sense"]
    settings: dict[str, Any] = {"kind": corpora.corpus_kind(config, source).kind}
    settings["limit"] = ns["limit"]
    if source == "hippocorpus":
        settings["story_types"] = config["hippocorpus"]["story_types"]
    if source == "books":
        settings["books"] = ns["books_reference"]
        settings["seed"] = ns["seed"]
        settings["columns"] = config["books"]["columns"]
        settings["path_template"] = config["books"]["path_template"]
    if source in (config.get("corpora") or {}):
        settings["columns"] = config["corpora"][source]["columns"]
    return settings
