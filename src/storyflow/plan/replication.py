"""Replication (docs/replication.md): which papers' published results are set beside ours, the
result files each comparison reads, the settings it depends on, and its result paths.

A paper is compared when ``replication.enabled`` is on and the measure it defines runs: Fiction
Flows with sequentiality (always), Roemmele et al. with narrative sense, 100-Endings with
tension, Fabula Entropy Indexing with fabula entropy, FlawedFictions with plot holes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.fabula_entropy as fabula_entropy
import storyflow.plan.layout as layout
import storyflow.plan.narrative_sense as narrative_sense
import storyflow.plan.plot_holes as plot_holes
import storyflow.plan.sequentiality as sequentiality
import storyflow.plan.tension as tension
from storyflow.plan.layout import Layout
from storyflow.replication.published import path_of

#: ``results/replication/<paper>.csv`` and ``results/replication/figures/<paper>.png``
OUT = Layout("replication")

#: Each paper with a published-results file and the measure switch it needs (None: always on).
PAPER_MEASURES = {
    "fiction_flows": None,
    "narrative_sense_pmi": "narrative_sense",
    "hundred_endings_tension": "tension",
    "fabula_entropy_indexing": "fabula_entropy",
    "flawed_fictions": "plot_holes",
}


def papers(config: Mapping[str, Any]) -> list[str]:
    """The papers compared in this run ([] when ``replication.enabled`` is off)."""
    if not config["replication"]["enabled"]:
        return []
    return [
        paper
        for paper, measure in PAPER_MEASURES.items()
        if measure is None or config[measure]["enabled"]
    ]


def table(paper: str) -> str:
    """The replication table of ``paper`` (:data:`storyflow.tables.REPLICATION`)."""
    return OUT.shared(f"{paper}.csv")


def figure(paper: str, extension: str = "png") -> str:
    """The replication figure of ``paper``."""
    return OUT.shared("figures", f"{paper}.{extension}")


def _fiction_flows_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    models = sequentiality.models(config)
    inputs: dict[str, list[str]] = {}
    for corpus in ("hippocorpus", "books"):
        if corpus not in sequentiality.corpora(config):
            continue
        inputs[corpus] = [
            sequentiality.OUT.of(corpus, "scores", m, "stories.parquet") for m in models
        ]
        inputs[f"{corpus}_labels"] = [layout.CORPUS.of(corpus, "stories.parquet")]
    if sequentiality.regressions(config)[0]:
        inputs["regression"] = [
            sequentiality.OUT.of("hippocorpus", "tables", "regression_coefficients.csv")
        ]
    return inputs


def _tension_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    if "hanna" not in tension.choices(config)["corpora"]:
        return {}
    return {"hanna_effects": [tension.OUT.of("hanna", "tables", "effects.csv")]}


def _plot_holes_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    inputs = {}
    if plot_holes.benchmark(config):
        inputs["benchmark_scores"] = [
            plot_holes.OUT.of(plot_holes.BENCHMARK, "tables", "scores.csv")
        ]
    if "hanna" in plot_holes.corpora(config):
        inputs["hanna_rates"] = [plot_holes.OUT.of("hanna", "tables", "detection_rates.csv")]
    return inputs


def _narrative_sense_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    inputs = {"pmi": [narrative_sense.OUT.shared("pmi.parquet")]}
    if "hanna" in narrative_sense.targets(config):
        inputs["hanna_table"] = [narrative_sense.OUT.of("hanna", "tables", "narrative_sense.csv")]
        inputs["hanna_scores"] = [narrative_sense.OUT.of("hanna", "story_scores.parquet")]
    return inputs


def _fabula_entropy_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    files = {}
    for corpus in fabula_entropy.corpora(config):
        files[f"{corpus}_comparison"] = [fabula_entropy.OUT.of(corpus, "tables", "comparison.csv")]
        files[f"{corpus}_indices"] = [fabula_entropy.OUT.of(corpus, "story_indices.parquet")]
    return files


_INPUTS = {
    "fiction_flows": _fiction_flows_inputs,
    "hundred_endings_tension": _tension_inputs,
    "flawed_fictions": _plot_holes_inputs,
    "narrative_sense_pmi": _narrative_sense_inputs,
    "fabula_entropy_indexing": _fabula_entropy_inputs,
}


def inputs(config: Mapping[str, Any], paper: str) -> dict[str, list[str]]:
    """The files ``paper``'s comparison reads, by name: its published figures (``published``)
    and the measure's result tables (which carry their validity verdicts)."""
    return {"published": [str(path_of(paper))], **_INPUTS[paper](config)}


def _model_labels(config: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Each configured model's family, size and variant (to match the papers' models)."""
    return {
        m["name"]: {k: str(m.get(k) or "") for k in ("family", "size", "variant")}
        for m in config["models"]
    }


def settings(config: Mapping[str, Any], paper: str) -> dict[str, Any]:
    """The settings ``paper``'s comparison depends on (a rule's ``params``)."""
    stats = config["stats"]
    common = {
        "confidence": stats["confidence"],
        "bootstrap": stats["bootstrap"],
        "seed": stats["seed"],
        "min_group_size": config["validity"]["min_group_size"],
        "models": _model_labels(config),
    }
    if paper == "narrative_sense_pmi":
        common["reference"] = list(config["narrative_sense"]["reference"])
    if paper == "fiction_flows":
        common["min_sentences"] = stats["min_sentences"]
        common["contrasts"] = {
            c: config[c]["contrasts"]
            for c in ("hippocorpus", "books")
            if c in sequentiality.corpora(config)
        }
    return common


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """Every compared paper's table and figure (rule all)."""
    return [path for paper in papers(config) for path in (table(paper), figure(paper))]
