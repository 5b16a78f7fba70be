"""storyflow: narrative measures of stories with language models, as a reproducible workflow.

The library holds all the logic; the Snakemake rules under ``workflow/`` call it through the
thin scripts in ``scripts/``. Packages, from the bottom layer up (docs/architecture.md):

- base: :mod:`storyflow.errors`, :mod:`storyflow.runner`, :mod:`storyflow.settings` (settings
  objects built from validated config blocks), :mod:`storyflow.tables` (every table passed
  between rules), :mod:`storyflow.history`, :mod:`storyflow.seeds`, :mod:`storyflow.progress`,
  :mod:`storyflow.config_files`;
- data and models: :mod:`storyflow.corpora` (the corpus registry), :mod:`storyflow.sentences`,
  :mod:`storyflow.lm` (model registry, model weights, backends, NLL engine, sampling,
  closed-choice answers);
- statistics: :mod:`storyflow.stats` (group tests and contrasts shared by the measures),
  :mod:`storyflow.lmer`, :mod:`storyflow.validity` (can a model do the job a measure gives it);
- measures, one package each (:mod:`storyflow.measures`):

  - sequentiality (Sap et al.): :mod:`storyflow.measures.sequentiality`;
  - narrative sense, PMI of content-lemma pairs (Roemmele et al.):
    :mod:`storyflow.measures.narrative_sense`;
  - tension by ending forecasting, "100-Endings" (Sui et al.): :mod:`storyflow.measures.tension`;
  - fabula entropy indexing (Castricato et al.): :mod:`storyflow.measures.fabula_entropy`;
  - plot holes, FlawedFictions (Ahuja et al.): :mod:`storyflow.measures.plot_holes`;

- comparison: :mod:`storyflow.comparison` (every measure on the same stories: correlations,
  group separation, model agreement);
- figures and planning: :mod:`storyflow.figures`, :mod:`storyflow.plan` (what the workflow runs,
  from the config), :mod:`storyflow.estimate` (what the language-model stages will cost).
"""

#: storyflow's version, written here only: pyproject.toml reads it, CITATION.cff, the README's
#: BibTeX entry and CHANGELOG.md state it, and every run records it (results/run.csv,
#: :mod:`storyflow.versions`); tests/test_version.py keeps them equal.
__version__ = "0.2.0"
