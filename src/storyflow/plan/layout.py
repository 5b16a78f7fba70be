"""Where every result goes: one layout for every measure (docs/architecture.md, "Results").

``results/<corpus>/<measure>/`` holds what a measure makes of one corpus; ``results/<measure>/``
what it makes of no single corpus (a calibration, a validation pool, a vocabulary).
Inside either, ``tables/`` holds the CSV tables a reader opens, ``figures/`` the figures (PNG and
PDF), and the measure's Parquet intermediates lie at the top or in folders named for their
stage. Two run-wide tables sit directly under ``results/``: ``validity.csv`` and
``lm_cost.csv``.

Each measure's planning module (:mod:`storyflow.plan.tension`, ...) holds a :class:`Layout` and
builds every path of that measure from it; the rules files use the same object, so a path is
written in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

RESULTS = "results"

#: The run-wide tables under ``results/``.
VALIDITY = f"{RESULTS}/validity.csv"
LM_COST = f"{RESULTS}/lm_cost.csv"


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

    def figure(self, *parts: str) -> str:
        """``results/{corpus}/<name>/figures/<parts...>``: a figure."""
        return self("figures", *parts)

    def shared(self, *parts: str) -> str:
        """``results/<name>/<parts...>``: a file of this measure for no single corpus."""
        return "/".join((RESULTS, self.name, *parts))

    def shared_table(self, *parts: str) -> str:
        """``results/<name>/tables/<parts...>``."""
        return self.shared("tables", *parts)

    def of(self, corpus: str, *parts: str) -> str:
        """:meth:`__call__` with ``{corpus}`` filled in (other wildcards kept)."""
        return self(*parts).replace("{corpus}", corpus, 1)

    def story_measures(self, corpus: str) -> str:
        """The measure's story-measure table of ``corpus``
        (:data:`storyflow.tables.STORY_MEASURES`), which the comparison reads."""
        return self.of(corpus, "story_measures.parquet")


#: The corpus stage: stories, sentences and their counts (``results/<corpus>/corpus/``).
CORPUS = Layout("corpus")
