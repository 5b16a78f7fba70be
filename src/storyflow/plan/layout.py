"""Where every file goes: one layout for every measure and stage (docs/architecture.md,
"Results").

``results/<corpus>/<measure>/`` holds what a measure makes of one corpus; ``results/<measure>/``
what it makes of no single corpus (a calibration, a validation pool, a vocabulary).
Inside either, ``tables/`` holds the CSV tables a reader opens, ``figures/`` the figures (PNG and
PDF), and the measure's Parquet intermediates lie at the top or in folders named for their
stage. Four run-wide tables sit directly under ``results/``: ``validity.csv``,
``lm_cost.csv``, ``models.csv`` (:data:`storyflow.plan.models.PROVENANCE`) and ``run.csv`` (what
the run ran with: :data:`RUN_RECORD`). A job's log is
``logs/<corpus>/<measure>/<rule>[/<wildcards>].log`` (or ``logs/<measure>/<rule>...`` for a job
of no single corpus); a model's weights are ``resources/models/<model>.gguf``, or its
checkpoint's manifest ``resources/models/<model>.checkpoint.json``
(:mod:`storyflow.plan.models`).

Each measure's planning module (:mod:`storyflow.plan.tension`, ...) holds a :class:`Layout` and
names every file of that measure once, as a module constant built from it (a Snakemake template
whose wildcards the rules fill); the rules files, ``final_outputs`` and the tests use those
names, so a file name is written in one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

RESULTS = "results"
LOGS = "logs"

#: The run-wide tables under ``results/``.
VALIDITY = f"{RESULTS}/validity.csv"
LM_COST = f"{RESULTS}/lm_cost.csv"
#: The run record: storyflow's version and its libraries' (rule record_run, storyflow.versions).
RUN_RECORD = f"{RESULTS}/run.csv"


def fill(template: str, **values: str) -> str:
    """``template`` with the wildcards named in ``values`` filled, every other wildcard kept:
    ``fill("results/{corpus}/x/{model}.csv", corpus="hanna")`` is
    ``"results/hanna/x/{model}.csv"``."""

    def value(found: re.Match[str]) -> str:
        name = found.group(1)
        return str(values[name]) if name in values else found.group(0)

    return re.sub(r"\{(\w+)\}", value, template)


def each_corpus(corpora: Iterable[str], *templates: str) -> list[str]:
    """Every one of ``templates`` with ``{corpus}`` filled (:func:`fill`), corpus by corpus:
    ``each_corpus(["a", "b"], X, Y)`` is X and Y of ``a``, then X and Y of ``b``."""
    return [fill(template, corpus=corpus) for corpus in corpora for template in templates]


@dataclass(frozen=True)
class Figure:
    """A figure's two files: ``png`` and ``pdf`` templates of one stem."""

    stem: str

    @property
    def png(self) -> str:
        return f"{self.stem}.png"

    @property
    def pdf(self) -> str:
        return f"{self.stem}.pdf"

    def of(self, **values: str) -> Figure:
        """The figure with the wildcards named in ``values`` filled (:func:`fill`)."""
        return Figure(fill(self.stem, **values))


@dataclass(frozen=True)
class Layout:
    """The result folders of one measure (or stage), ``name``.

    Paths are Snakemake templates: ``{corpus}`` (and any wildcard in ``parts``) is left for
    Snakemake to fill; :meth:`of` fills ``{corpus}`` for one corpus.
    """

    name: str

    def __call__(self, *parts: str) -> str:
        """``results/{corpus}/<name>/<parts...>``: a file of this measure for one corpus."""
        return "/".join((RESULTS, "{corpus}", self.name, *parts))

    def table(self, *parts: str) -> str:
        """``results/{corpus}/<name>/tables/<parts...>``: a CSV table."""
        return self("tables", *parts)

    def figure(self, *parts: str) -> Figure:
        """``results/{corpus}/<name>/figures/<parts...>`` (without extension): a figure."""
        return Figure(self("figures", *parts))

    def shared(self, *parts: str) -> str:
        """``results/<name>/<parts...>``: a file of this measure for no single corpus."""
        return "/".join((RESULTS, self.name, *parts))

    def shared_table(self, *parts: str) -> str:
        """``results/<name>/tables/<parts...>``."""
        return self.shared("tables", *parts)

    def shared_figure(self, *parts: str) -> Figure:
        """``results/<name>/figures/<parts...>`` (without extension)."""
        return Figure(self.shared("figures", *parts))

    def of(self, corpus: str, *parts: str) -> str:
        """:meth:`__call__` with ``{corpus}`` filled in (other wildcards kept)."""
        return fill(self(*parts), corpus=corpus)

    def log(self, rule: str, *wildcards: str) -> str:
        """The log of a job of ``rule`` for one corpus:
        ``logs/{corpus}/<name>/<rule>[/{wildcard}...].log``."""
        return _log(LOGS, "{corpus}", self.name, rule, wildcards=wildcards)

    def shared_log(self, rule: str, *wildcards: str) -> str:
        """The log of a job of ``rule`` for no single corpus:
        ``logs/<name>/<rule>[/{wildcard}...].log``."""
        return _log(LOGS, self.name, rule, wildcards=wildcards)


def _log(*folders: str, wildcards: tuple[str, ...]) -> str:
    return "/".join((*folders, *(f"{{{w}}}" for w in wildcards))) + ".log"


#: The corpus stage: stories, sentences and their counts (``results/<corpus>/corpus/``).
CORPUS = Layout("corpus")
