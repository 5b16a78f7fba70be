"""Replication (docs/replication.md): which papers' published results are set beside ours, the
result files each comparison reads, the settings it depends on, and its result paths.

A paper is compared when ``replication.enabled`` is on, the measure it defines runs and a
corpus of the paper's is planned (its measure's ``paper_corpus``): Fiction Flows when
sequentiality reads HIPPOCORPUS or the books, Roemmele et al. with narrative sense, 100-Endings
when tension scores HANNA, Fabula Entropy Indexing with fabula entropy, FlawedFictions when plot
holes run on the benchmark or on HANNA. A run of the user's own corpora alone compares no paper.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storyflow.lm.rates import model_rates
from storyflow.plan.layout import Layout, fill
from storyflow.plan.registry import MEASURES, replicating
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


def papers(config: Mapping[str, Any]) -> list[str]:
    """The papers compared in this run, by name: those whose measure runs on a corpus of the
    paper's (:meth:`storyflow.plan.registry.Measure.replicates`; [] when
    ``replication.enabled`` is off)."""
    if not config["replication"]["enabled"]:
        return []
    return [m.paper.name for m in MEASURES if m.paper and m.replicates(config)]


def table(paper: str) -> str:
    """The replication table of ``paper`` (:data:`storyflow.tables.REPLICATION`)."""
    return fill(TABLE, paper=paper)


def inputs(config: Mapping[str, Any], paper: str) -> dict[str, list[str]]:
    """The files ``paper``'s comparison reads, by name: its published figures (``published``)
    and the measure's result tables (which carry their validity verdicts)."""
    return {"published": [str(path_of(paper))], **replicating(paper).paper_inputs(config)}


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
            "power": config["replication"]["power"],
            "confidence": config["stats"]["confidence"],
        },
        "rates": rates(config),
    }
    return {**common, **replicating(paper).paper_settings(config)}


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """Every compared paper's table, figure and page (rule all)."""
    return [
        path
        for paper in papers(config)
        for path in (fill(TABLE, paper=paper), FIGURE.of(paper=paper).png, fill(PAGE, paper=paper))
    ]
