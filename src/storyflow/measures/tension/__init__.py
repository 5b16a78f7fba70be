"""Narrative tension by ending forecasting (after Sui et al. 2026; docs/method.md §12,
docs/tension.md).

A story is tense where a reader cannot yet tell how it ends. At each *cut* (after a sentence) a
forecaster model samples K endings from the text so far; a judge decides whether each predicted
ending captures the general direction of the actual remainder; the cut's **no-rate** is 1 −
(endings that do) / K (0-1; an ending without a verdict counts as one that does not).

- :mod:`~storyflow.measures.tension.cuts`: where a story is cut (pct of its tokens, the paper's
  minimum-context rule, cap);
- :mod:`~storyflow.measures.tension.forecast`: the forecast prompt and K sampled endings per cut;
- :mod:`~storyflow.measures.tension.judges`: the embedding judge (cosine of the whole texts ≥ a
  threshold) and the LLM judge (closed Y/N answer);
- :mod:`~storyflow.measures.tension.calibration`: a forecaster's forecasts of ROCStories stories
  against their right and wrong endings: the embedding threshold, fitted on one half, and the
  LLM judges' verdicts on the other;
- :mod:`~storyflow.measures.tension.validity`: the validity checks of the forecaster and of each
  judge on those forecasts, and the labels they give the results;
- :mod:`~storyflow.measures.tension.curves`: no-rate curves and the story statistics (mean,
  late no-rate, post-spike convergence, inflection rate);
- :mod:`~storyflow.measures.tension.likelihood`: the cheap companion, the pointwise mutual
  information of the remainder with the prefix (nats/token);
- :mod:`~storyflow.measures.tension.compare`: group means with bootstrap CIs, paired effects
  (HANNA: each LLM vs the human story of the same prompt), the story-measures table.

Rules: workflow/rules/tension/.
"""
