"""storyflow: narrative measures of stories with language models, as a reproducible workflow.

The library holds all the logic; the Snakemake rules under ``workflow/`` call it through the
thin scripts in ``scripts/``. Packages, from the bottom layer up (docs/architecture.md):

- base: :mod:`storyflow.errors`, :mod:`storyflow.runner`, :mod:`storyflow.tables` (every table
  passed between rules), :mod:`storyflow.history`, :mod:`storyflow.seeds`;
- data and models: :mod:`storyflow.corpora` (the corpus registry), :mod:`storyflow.sentences`,
  :mod:`storyflow.lm` (model registry, backends, NLL engine, sampling, closed-choice answers);
- statistics: :mod:`storyflow.stats`, :mod:`storyflow.lmer`;
- measures: :mod:`storyflow.measures.sequentiality`, :mod:`storyflow.measures.narrative_sense`;
- :mod:`storyflow.figures` and :mod:`storyflow.plan` (what the workflow runs, from the config).
"""

__version__ = "0.1.0"
