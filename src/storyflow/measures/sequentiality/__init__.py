"""Narrative sequentiality (Sap et al. 2022; docs/method.md §1–§7).

- :mod:`~storyflow.measures.sequentiality.scores`: sentence and story sequentiality from the NLL
  table (nats/token);
- :mod:`~storyflow.measures.sequentiality.covariates`: sentence-level coherence covariates;
- :mod:`~storyflow.measures.sequentiality.regression`: mixed-effects regressions on them.

Rules: workflow/rules/sequentiality/ (nll, scores, stats, figures, covariates, regression).
"""
