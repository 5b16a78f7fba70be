"""The measures storyflow computes: one record each, the one answer to "which measures are there".

A measure is five things with one name (docs/adding_a_measure.md): a config block
(``config[<name>]``), a planning module (``storyflow.plan.<name>``), a package
(``storyflow.measures.<name>``), a rules folder (``workflow/rules/<name>/``: ``common.smk`` with
its lookups, one file per stage) and a results folder (``results/<corpus>/<name>/``, plus
``results/<name>/`` for what belongs to no one corpus). Its record here names its report
category and points at its planning module, which answers, from the validated config alone:

* ``OUT``: its :class:`~storyflow.plan.layout.Layout`;
* ``enabled(config)``: whether it runs;
* ``corpora(config)``: the corpora it scores (a story-measure table each, which the comparison
  reads); [] when off;
* ``final_outputs(config)``: its targets of rule all;
* ``validity_tables(config)``: the validity tables it writes (gathered into
  ``results/validity.csv``);
* ``cost_settings(config)``: per corpus, its language-model stages' settings (the cost estimate
  of ``storyflow.estimate``; {} for a measure that asks no model questions);
* ``ROLES``: the roles it gives models (:class:`storyflow.plan.roles.Role`: the values of
  ``models[].roles`` and the config keys that name each role's models).

The record itself holds what is not planning: the display name, the summary, the replicated
paper, the rows of the language-model cost estimate and the rule that turns validity checks into
a verdict on each of its story measures.

Everything that lists the measures derives from :data:`MEASURES`: rule all
(:func:`storyflow.plan.final_outputs`), the rules the Snakefile includes (:func:`rule_folders`),
the comparison (:mod:`storyflow.plan.comparison`), the validity table
(:mod:`storyflow.plan.validity`), the cost estimate (:mod:`storyflow.plan.cost`), the report's
first page and the layout tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pandas as pd

import storyflow.measures.fabula_entropy.cost as fabula_entropy_cost
import storyflow.measures.fabula_entropy.verdict as fabula_entropy_verdict
import storyflow.measures.plot_holes.cost as plot_holes_cost
import storyflow.measures.plot_holes.verdict as plot_holes_verdict
import storyflow.measures.tension.cost as tension_cost
import storyflow.measures.tension.verdict as tension_verdict
import storyflow.plan.fabula_entropy as fabula_entropy
import storyflow.plan.narrative_sense as narrative_sense
import storyflow.plan.plot_holes as plot_holes
import storyflow.plan.sequentiality as sequentiality
import storyflow.plan.tension as tension
import storyflow.replication.papers as papers
from storyflow.lm.budget import StageCost
from storyflow.plan.layout import Layout
from storyflow.plan.roles import Role
from storyflow.validity import VerdictRule

Config = Mapping[str, Any]
#: A measure's cost rows: (per story its sentence count ``n``, ``words``, sentence word counts
#: ``per`` and texts ``texts``; the measure's cost settings of one corpus) → its stages' costs.
CostRows = Callable[[pd.DataFrame, Mapping[str, Any]], Iterable[StageCost]]

#: What every measure's planning module defines (see the module docstring).
PLAN_NAMES = (
    "OUT",
    "ROLES",
    "enabled",
    "corpora",
    "final_outputs",
    "validity_tables",
    "cost_settings",
)
#: What the planning module of a measure that replicates a paper defines besides:
#: ``paper_corpus(config)`` (whether a corpus of the paper's is planned: without one the paper
#: has nothing to compare), ``paper_inputs(config)`` (the result files its comparison reads, by
#: name) and ``paper_settings(config)`` (the settings of the measure's own its comparison
#: depends on).
PAPER_NAMES = ("paper_corpus", "paper_inputs", "paper_settings")


@dataclass(frozen=True)
class Measure:
    """One measure: its ``name`` (config key, rules folder, results folder, package), the
    report ``category`` its tables and figures go to (its display name), its planning
    ``module``, a ``summary`` in words (what it measures, in what unit; the report's page of
    the paper it replicates opens with it), the ``paper`` it replicates, if any
    (:class:`storyflow.replication.papers.Paper`: its published results,
    ``storyflow/data/published/<paper>.csv``; the paper's text is ``<paper>.txt`` of the papers
    folder; what the run plans for it, the module's :data:`PAPER_NAMES`), ``cost_rows``: how it
    counts what its stages will ask models of a corpus (``(stories, its cost settings) →``
    :class:`~storyflow.lm.budget.StageCost` rows; None when it asks none), and ``verdict``: the
    rule that turns the validity table into a verdict on each of its story measures (None:
    its models score likelihoods rather than do a task, and no check covers them)."""

    name: str
    category: str
    module: ModuleType
    summary: str
    paper: papers.Paper | None = None
    cost_rows: CostRows | None = None
    verdict: VerdictRule | None = None

    def __post_init__(self) -> None:
        needed = (*PLAN_NAMES, *(PAPER_NAMES if self.paper else ()))
        missing = [f for f in needed if not hasattr(self.module, f)]
        if missing:
            raise TypeError(f"storyflow.plan.{self.name} lacks {', '.join(missing)}")
        if Layout(self.name) != self.module.OUT:
            raise TypeError(f"storyflow.plan.{self.name}.OUT is not Layout({self.name!r})")

    @property
    def out(self) -> Layout:
        """Its result folders."""
        return self.module.OUT

    @property
    def roles(self) -> tuple[Role, ...]:
        """The roles it gives models (its planning module's ``ROLES``)."""
        return tuple(self.module.ROLES)

    @property
    def doc(self) -> str:
        """Its documentation page."""
        return f"docs/{self.name}.md"

    def enabled(self, config: Config) -> bool:
        return bool(self.module.enabled(config))

    def corpora(self, config: Config) -> list[str]:
        return list(self.module.corpora(config))

    def final_outputs(self, config: Config) -> list[str]:
        return list(self.module.final_outputs(config))

    def validity_tables(self, config: Config) -> list[str]:
        return list(self.module.validity_tables(config))

    def cost_settings(self, config: Config) -> dict[str, dict[str, Any]]:
        return dict(self.module.cost_settings(config))

    def replicates(self, config: Config) -> bool:
        """Whether it runs on a corpus of its paper's (False without a paper)."""
        return bool(self.paper and self.enabled(config) and self.module.paper_corpus(config))

    def paper_inputs(self, config: Config) -> dict[str, list[str]]:
        return dict(self.module.paper_inputs(config))

    def paper_settings(self, config: Config) -> dict[str, Any]:
        return dict(self.module.paper_settings(config))


#: The measures, in the order the report, the comparison and the validity table list them.
MEASURES: tuple[Measure, ...] = (
    Measure(
        "sequentiality",
        "Sequentiality",
        sequentiality,
        "(Sap et al. 2022) how much more predictable a sentence becomes when the preceding "
        "sentences of its story are in the prompt (nats/token), per story type, with effect "
        "sizes of the corpus's contrasts and mixed-effects regressions on coherence covariates",
        papers.FICTION_FLOWS,
    ),
    Measure(
        "narrative_sense",
        "Narrative sense",
        narrative_sense,
        "(Roemmele et al.) story-level PMI of content-word pairs and the share of stories whose "
        "pairs beat a random story's",
        papers.NARRATIVE_SENSE,
    ),
    Measure(
        "tension",
        "Tension",
        tension,
        "(Sui et al.) the share of forecast endings that miss the real one as a story unfolds "
        "(the no-rate, 0-1), per group",
        papers.HUNDRED_ENDINGS,
        tension_cost.cost_rows,
        tension_verdict.verdict,
    ),
    Measure(
        "fabula_entropy",
        "Fabula entropy",
        fabula_entropy,
        "(Castricato et al.) the entropy of readers' yes/no answers about a story (bits), "
        "original against corrupted versions",
        papers.FABULA_ENTROPY,
        fabula_entropy_cost.cost_rows,
        fabula_entropy_verdict.verdict,
    ),
    Measure(
        "plot_holes",
        "Plot holes",
        plot_holes,
        "(Ahuja et al.) continuity errors made in the stories and how well detectors find "
        "them (CEEval-Full, 0-1)",
        papers.FLAWED_FICTIONS,
        plot_holes_cost.cost_rows,
        plot_holes_verdict.verdict,
    ),
)

#: Rules folders before the measures' (the corpora, the models' weights) and after them (what
#: reads every measure's results).
BEFORE = ("corpus", "models")
AFTER = ("comparison", "validity", "cost", "replication")


def names() -> list[str]:
    """The measures' names, in :data:`MEASURES` order."""
    return [m.name for m in MEASURES]


def measure(name: str) -> Measure:
    """The record of measure ``name``."""
    for m in MEASURES:
        if m.name == name:
            return m
    raise KeyError(f"no measure {name!r} (measures: {', '.join(names())})")


def replicating(name: str) -> Measure:
    """The measure that replicates paper ``name``."""
    for m in MEASURES:
        if m.paper and m.paper.name == name:
            return m
    raise KeyError(f"no measure replicates {name!r}")


def rule_folders() -> list[str]:
    """The folders of ``workflow/rules/`` the Snakefile includes, in order."""
    return [*BEFORE, *names(), *AFTER]


def roles() -> list[Role]:
    """Every measure's roles, in :data:`MEASURES` order: the schema's ``models[].roles``."""
    return [role for m in MEASURES for role in m.roles]


def scoring_roles() -> list[str]:
    """The roles that score given text token by token (:attr:`Role.scores_text`): a served
    model takes them only with its tokenizer and the completions API."""
    return [role.name for role in roles() if role.scores_text]


def verdict_rules() -> dict[str, VerdictRule]:
    """Each measure's verdict rule, by name (those with none are not checked): what
    :func:`storyflow.comparison.verdicts.measure_verdicts` applies."""
    return {m.name: m.verdict for m in MEASURES if m.verdict is not None}
