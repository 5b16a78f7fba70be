"""Replication (docs/replication.md): which papers' published results are set beside ours, the
result files each comparison reads, the settings it depends on, and its result paths.

A paper is compared when ``replication.enabled`` is on, the measure it defines runs and a
corpus of the paper's is planned (:data:`PAPER_CORPORA`): Fiction Flows when sequentiality reads
HIPPOCORPUS or the books, Roemmele et al. with narrative sense, 100-Endings when tension scores
HANNA, Fabula Entropy Indexing with fabula entropy, FlawedFictions when plot holes run on the
benchmark or on HANNA. A run of the user's own corpora alone compares no paper.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.corpus as corpus_plan
import storyflow.plan.fabula_entropy as fabula_entropy
import storyflow.plan.narrative_sense as narrative_sense
import storyflow.plan.plot_holes as plot_holes
import storyflow.plan.sequentiality as sequentiality
import storyflow.plan.tension as tension
from storyflow.lm.rates import model_rates
from storyflow.plan.layout import Layout, fill
from storyflow.plan.registry import MEASURES
from storyflow.plan.statistics import replication as replication_statistics
from storyflow.replication.published import path_of

#: ``results/replication/<paper>.csv``, ``results/replication/figures/<paper>.png`` and
#: ``results/replication/<paper>.html``
OUT = Layout("replication")

# --- the files, each named once (wildcard: {paper})
TABLE = OUT.shared("{paper}.csv")
FIGURE = OUT.shared_figure("{paper}")
#: The paper's page in the report's Replication category (storyflow.replication.page).
PAGE = OUT.shared("{paper}.html")


def _fiction_flows_corpora(config: Mapping[str, Any]) -> bool:
    return bool({"hippocorpus", "books"} & set(sequentiality.corpora(config)))


def _tension_corpora(config: Mapping[str, Any]) -> bool:
    return "hanna" in tension.corpora(config)


def _plot_holes_corpora(config: Mapping[str, Any]) -> bool:
    return plot_holes.benchmark(config) is not None or "hanna" in plot_holes.corpora(config)


def _narrative_sense_corpora(config: Mapping[str, Any]) -> bool:
    return bool(narrative_sense.sources(config))


def _fabula_entropy_corpora(config: Mapping[str, Any]) -> bool:
    return bool(fabula_entropy.corpora(config))


#: Per paper, whether the run plans a corpus its published results can be set beside (its
#: measure on the paper's corpus); without one the paper has nothing to compare.
PAPER_CORPORA = {
    "fiction_flows": _fiction_flows_corpora,
    "hundred_endings_tension": _tension_corpora,
    "flawed_fictions": _plot_holes_corpora,
    "narrative_sense_pmi": _narrative_sense_corpora,
    "fabula_entropy_indexing": _fabula_entropy_corpora,
}


def papers(config: Mapping[str, Any]) -> list[str]:
    """The papers compared in this run: those whose measure runs on a corpus of the paper's
    (:data:`PAPER_CORPORA`; [] when ``replication.enabled`` is off)."""
    if not config["replication"]["enabled"]:
        return []
    return [
        m.paper
        for m in MEASURES
        if m.paper and m.enabled(config) and PAPER_CORPORA.get(m.paper, m.enabled)(config)
    ]


def table(paper: str) -> str:
    """The replication table of ``paper`` (:data:`storyflow.tables.REPLICATION`)."""
    return fill(TABLE, paper=paper)


def _fiction_flows_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    models = sequentiality.models(config)
    inputs: dict[str, list[str]] = {}
    for corpus in ("hippocorpus", "books"):
        if corpus not in sequentiality.corpora(config):
            continue
        inputs[corpus] = [fill(sequentiality.STORY_SCORES, corpus=corpus, model=m) for m in models]
        inputs[f"{corpus}_labels"] = [fill(corpus_plan.STORIES, corpus=corpus)]
        inputs[f"{corpus}_nll_cost"] = [
            fill(sequentiality.NLL_COST, corpus=corpus, model=m) for m in models
        ]
    if sequentiality.regressions(config)[0] and "hippocorpus" in sequentiality.regression_corpora(
        config
    ):
        inputs["regression"] = [fill(sequentiality.REGRESSION_COEFFICIENTS, corpus="hippocorpus")]
    return inputs


def _tension_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    if "hanna" not in tension.corpora(config):
        return {}
    return {"hanna_effects": [fill(tension.EFFECTS, corpus="hanna")]}


def _plot_holes_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    inputs = {}
    if plot_holes.benchmark(config):
        inputs["benchmark_scores"] = [fill(plot_holes.SCORES, corpus=plot_holes.BENCHMARK)]
    if "hanna" in plot_holes.corpora(config):
        inputs["hanna_rates"] = [fill(plot_holes.DETECTION_RATES, corpus="hanna")]
    return inputs


def _narrative_sense_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    inputs = {"pmi": [narrative_sense.PMI]}
    if "hanna" in narrative_sense.corpora(config):
        inputs["hanna_table"] = [fill(narrative_sense.GROUPS, corpus="hanna")]
        inputs["hanna_scores"] = [fill(narrative_sense.STORY_SCORES, corpus="hanna")]
    return inputs


def _fabula_entropy_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    files = {}
    for corpus in fabula_entropy.corpora(config):
        files[f"{corpus}_comparison"] = [fill(fabula_entropy.COMPARISON, corpus=corpus)]
        files[f"{corpus}_indices"] = [fill(fabula_entropy.STORY_INDICES, corpus=corpus)]
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


def rates(config: Mapping[str, Any]) -> dict[str, Any]:
    """Language-model throughput (tokens per second) that turns the tokens needed to decide a
    row into hours: per model its CPU price (its NLL rate, else ``replication.rates.cpu``) and
    GPU rate and where each comes from (``models``: :func:`storyflow.lm.rates.model_rates`),
    and the defaults of a model without one (``cpu``, ``gpu``: ``replication.rates``);
    :class:`storyflow.replication.decide.Rates`."""
    given = config["replication"]["rates"]
    models = {}
    for name, rate in model_rates(config).items():
        cpu = rate.cpu_price(given["cpu"])
        models[name] = {
            "cpu": cpu.tokens_per_second, "gpu": rate.gpu.tokens_per_second,
            "cpu_basis": cpu.source, "gpu_basis": rate.gpu.source,
        }  # fmt: skip
    return {"cpu": float(given["cpu"]), "gpu": float(given["gpu"]), "models": models}


def settings(config: Mapping[str, Any], paper: str) -> dict[str, Any]:
    """The settings ``paper``'s comparison depends on (a rule's ``params``)."""
    common = {
        **replication_statistics(config),
        "models": _model_labels(config),
        "verdicts": {
            "band": config["replication"]["equivalence_band"],
            "alpha": config["regression"]["fdr_alpha"],
            "tolerance": config["replication"]["value_tolerance"],
        },
        "rates": rates(config),
    }
    if paper == "narrative_sense_pmi":
        common["reference"] = narrative_sense.references(config)
    if paper == "flawed_fictions":
        common["detection"] = plot_holes.sampling(config)
    if paper == "fiction_flows":
        common["min_sentences"] = config["stats"]["min_sentences"]
        common["contrasts"] = {
            c: config[c]["contrasts"]
            for c in ("hippocorpus", "books")
            if c in sequentiality.corpora(config)
        }
    return common


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """Every compared paper's table, figure and page (rule all)."""
    return [
        path
        for paper in papers(config)
        for path in (fill(TABLE, paper=paper), FIGURE.of(paper=paper).png, fill(PAGE, paper=paper))
    ]
